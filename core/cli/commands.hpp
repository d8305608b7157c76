// The subcommands of `expr`. Each returns the process exit code (ExitCode below).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "expect/guesses.hpp"
#include "expect/sweep.hpp"
#include "report/run_directory.hpp"
#include "report/run_result.hpp"
#include "series/plan.hpp"

namespace expr::cli {

// Documented in README.md ("Exit codes").
enum ExitCode : int {
  ok = 0,
  required_guess_failed = 1,  // a guess marked required was contradicted or could not be judged
  bad_input = 2,              // usage, series file, plugin or guess errors: nothing ran
  experiment_failed = 3,      // an experiment failed, crashed or timed out (takes precedence over 1)
  cannot_write = 4,           // the run directory could not be written
};

// The exit code a finished run (or replay) earns.
ExitCode outcome_code(const report::Tally& tally);

struct RunArgs {
  std::filesystem::path series;
  std::optional<std::string> filter;
  std::optional<std::filesystem::path> out;
  std::optional<std::string> device;
  std::vector<std::string> axes;  // --axis NAME=VALUES (series/axes.hpp)
  bool dry_run = false;           // list the experiments (every sweep point) and stop
};

// A series read, checked against its plugins and with every guess compiled: what `run` needs
// before anything runs.
struct LoadedSeries {
  series::Plan plan;
  std::vector<std::vector<expect::CompiledGuess>> guesses;  // parallel to plan.experiments
  std::vector<expect::SweepGuess> sweep_guesses;
};
// Prints every problem and returns nothing on error. `axes` are --axis options.
std::optional<LoadedSeries> load_series(const std::filesystem::path& file, const std::vector<std::string>& axes = {});

// Prints the plan's experiments, one identity a line, with their count.
void print_expansion(const series::Plan& plan);

// Prints where the run's Chrome traces are, for Perfetto, TensorBoard and HTA, after `before`,
// when it has any.
void print_traces_line(const report::RunDirectory& dir, std::string_view before = "");

int run(const RunArgs& args);
int validate(const std::filesystem::path& series, const std::vector<std::string>& axes);
int list(const std::vector<std::filesystem::path>& extra_dirs);
int show(const std::filesystem::path& run_dir);
int replay(const std::filesystem::path& run_dir, const std::optional<std::filesystem::path>& series,
           const std::optional<std::filesystem::path>& out);
int metrics();

}  // namespace expr::cli
