// The subcommands of `expr`. Each returns the process exit code (ExitCode below).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expect/guesses.hpp"
#include "expect/sweep.hpp"
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
  incomplete = 5,             // merge: experiments of the series are missing (a shard did not finish or was not given)
};

// The exit code a finished run (or replay) earns.
ExitCode outcome_code(const report::Tally& tally);

struct RunArgs {
  std::filesystem::path series;  // with resume: optional, in place of the one the run recorded
  std::optional<std::filesystem::path> resume;  // a run directory to take up again (report/resume.hpp)
  std::optional<std::string> filter;
  std::optional<std::filesystem::path> out;
  std::optional<std::string> device;
  std::vector<std::string> axes;  // --axis NAME=VALUES (series/axes.hpp)
  bool dry_run = false;           // list the experiments (every sweep point) and stop
  std::optional<std::string> shard;  // "K/N": run only this shard's experiments (series/shard.hpp)
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

// The guesses a recorded run is judged with again (replay, merge): those recorded, with the series'
// own replaced by those of `series_file` when one is given. `planned` is every experiment of the
// series, as guesses that name a family resolve against it. Throws util::InputError.
struct RecordedGuesses {
  std::map<std::string, std::vector<expect::CompiledGuess>> points;  // per experiment
  std::vector<expect::SweepGuess> sweeps;
};
RecordedGuesses recorded_guesses(const report::RunResult& recorded, const std::vector<report::PlannedPoint>& planned,
                                 const std::optional<std::filesystem::path>& series_file);
// Judges the recorded experiments again into `run` and tells the outputs: the run directory `out`
// when given (results.json, reports, traces), the terminal report always.
ExitCode judge_again(report::RunResult& run, report::RunResult recorded, RecordedGuesses guesses, std::vector<report::PlannedPoint> planned,
                     const std::optional<std::filesystem::path>& out);

int run(const RunArgs& args);
int validate(const std::filesystem::path& series, const std::vector<std::string>& axes);
int list(const std::vector<std::filesystem::path>& extra_dirs);
// `program` is how expr was called, for the command that resumes an incomplete run.
int show(const std::filesystem::path& run_dir, const std::string& program);
// The shell command that resumes the run in `run_dir`.
std::string resume_command(const std::string& program, const std::filesystem::path& run_dir);
// A word for the shell: as it is when it needs no quoting, else in single quotes.
std::string shell_word(const std::string& word);
// Where `expr run` writes a run of `series` unless --out says otherwise: runs/<series>-<time>.
std::filesystem::path default_run_dir(const std::string& series);

struct SlurmArgs {
  std::filesystem::path series;
  std::size_t shards = 1;                       // --shards N: the array's tasks, one shard each
  std::size_t gpus_per_task = 0;                // --gpus-per-task G: 0 asks Slurm for none
  std::optional<std::string> partition, time, account, qos, constraint;
  std::vector<std::string> sbatch_lines;        // --sbatch-line: more #SBATCH lines for the array
  std::optional<std::filesystem::path> out;     // the run root, on a filesystem the nodes share
  bool submit = false;                          // run sbatch, instead of printing its commands
};
// `expr slurm`: writes a job-array script (one shard a task) and a merge job into the run root, and
// submits them with --submit (docs/slurm.md).
int slurm(const SlurmArgs& args);
int replay(const std::filesystem::path& run_dir, const std::optional<std::filesystem::path>& series,
           const std::optional<std::filesystem::path>& out);
// One run directory from the run directories of a series' shards: every guess judged again over
// all of them, the missing experiments named with their shard. Refuses shards of different series
// or environments unless `allow_mixed`.
int merge(const std::vector<std::filesystem::path>& shard_dirs, const std::filesystem::path& out, bool allow_mixed);
int metrics();

}  // namespace expr::cli
