// The subcommands of `expr`. Each returns the process exit code (exit_codes below).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "series/plan.hpp"

namespace expr::cli {

// Documented in README.md ("Exit codes").
enum ExitCode : int {
  ok = 0,
  required_guess_failed = 1,  // a guess marked required was contradicted or could not be judged
  bad_input = 2,              // usage, series file, plugin or expectation errors: nothing ran
  experiment_failed = 3,      // an experiment failed, crashed or timed out (takes precedence over 1)
  cannot_write = 4,           // the run directory could not be written
};

struct RunArgs {
  std::filesystem::path series;
  std::optional<std::string> filter;
  std::optional<std::filesystem::path> out;
  std::optional<std::string> device;
};

int run(const RunArgs& args);
// Reads a series and checks it against its plugins; prints every problem and returns nothing on error.
std::optional<series::Plan> load_plan(const std::filesystem::path& file);
int validate(const std::filesystem::path& series);
int list(const std::vector<std::filesystem::path>& extra_dirs);
int show(const std::filesystem::path& run_dir);
int replay(const std::filesystem::path& run_dir, const std::optional<std::filesystem::path>& series,
           const std::optional<std::filesystem::path>& out);
int metrics();

}  // namespace expr::cli
