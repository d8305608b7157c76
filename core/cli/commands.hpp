// The commands of `expr` as the command line runs them: each calls what its command does (the
// session stage, and measure for the commands that run experiments), prints what that returns, and
// gives the process's exit code: exit_code(), the one mapping from a command's status to it.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "report/run_directory.hpp"
#include "series/plan.hpp"
#include "session/options.hpp"
#include "session/places.hpp"
#include "session/status.hpp"

namespace expr::cli {

// Documented in README.md ("Exit codes").
enum ExitCode : int {
  ok = 0,
  required_guess_failed = 1,  // a guess marked required was contradicted or could not be judged
  bad_input = 2,              // usage, series file, plugin or guess errors: nothing ran; or runs that cannot be compared or merged
  experiment_failed = 3,      // an experiment failed, crashed, timed out or was interrupted (takes precedence over 6, 5 and 1)
  cannot_write = 4,           // the run directory or the history could not be written, or another run is writing it
  regression = 5,             // compared with a baseline, a regression beyond the gates (takes precedence over 1)
  incomplete = 6,             // merge: experiments of the series are missing (a shard did not finish or was not given); over 3 and 1
  // `expr run` stopped by a signal exits with 128 + its number: 130 for SIGINT, 143 for SIGTERM.
  interrupted_base = 128,
};

// The exit code of a command that ended with `status` (`signal`: the one that interrupted a run).
int exit_code(session::Status status, int signal = 0);
// Runs `command`; a session::Stop it throws is said on stderr and becomes its status's exit code.
int guarded(const std::function<int()>& command);

using session::shell_word;

// Prints the plan's experiments, one identity a line, with their count.
void print_expansion(const series::Plan& plan);
// A command worth running next, and what it does.
struct NextStep {
  std::string command, why;
};
// How the output of `expr run`, `show` and `replay` ends: the files to open (report.html,
// summary.md), where the Chrome traces are for Perfetto, TensorBoard and HTA, and the next commands.
void print_ending(const report::RunDirectory& dir, const std::vector<NextStep>& next);

int validate(const std::filesystem::path& series, const std::vector<std::string>& axes);
int list(const std::vector<std::filesystem::path>& extra_dirs);
// `program` is how expr was called, for the commands it prints. all: every experiment in the
// report, however many (report::listed_at_most otherwise).
int show(const std::filesystem::path& run_dir, const std::string& program, bool all);
int replay(const session::ReplayArgs& args, const std::string& program);
int merge(const session::MergeArgs& args);
int metrics();
int history(const session::HistoryArgs& args);
int compare(const session::CompareArgs& args);
int across(const session::AcrossArgs& args);

// Whether this expr can run experiments: false in a build without CUDA (EXPR_WITH_CUDA=OFF), whose
// run, calibrate and slurm say so and exit with bad_input (cli/without_runner.cpp).
extern const bool has_runner;
int run(const session::RunArgs& args);
int calibrate(const session::CalibrateArgs& args);
// `expr slurm`: writes a job-array script (one shard a task) and a merge job into the run root, and
// submits them with --submit (docs/slurm.md).
int slurm(const session::SlurmArgs& args);

// `expr new plugin NAME [--torch|--cuda] [--dir D]`: a plugin project outside expr's tree (a
// CMakeLists.txt with find_package(expr), NAME.cpp or NAME.cu, a series NAME.yaml with one guess
// the trace should confirm and one it should contradict, a README) in D, by default ./NAME.
enum class PluginKind { cpu, torch, cuda };
int new_plugin(const std::string& name, PluginKind kind, const std::optional<std::filesystem::path>& dir);
// `expr new series NAME [--plugin P] [--dir D]`: a commented series file D/NAME.yaml running P.
int new_series(const std::string& name, const std::optional<std::string>& plugin, const std::optional<std::filesystem::path>& dir);

}  // namespace expr::cli
