// The subcommands of `expr`. Each returns the process exit code (ExitCode below).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expect/guesses.hpp"
#include "expect/sweep.hpp"
#include "history/compare.hpp"
#include "history/store.hpp"
#include "report/run_directory.hpp"
#include "report/run_result.hpp"
#include "series/plan.hpp"

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

// The exit code a finished run (or replay) earns.
ExitCode outcome_code(const report::Tally& tally);

// What the gate holds, from the command line over the series' `gates:`.
struct GateArgs {
  std::vector<std::string> thresholds;  // --threshold METRIC=FRACTION (5% or 0.05)
  std::optional<bool> structure;        // --structure on|off
  double alpha = 0.05;
  bool across_environments = false;
};

struct RunArgs {
  std::filesystem::path series;  // with resume: optional, in place of the one the run recorded
  std::optional<std::filesystem::path> resume;  // a run directory to take up again (report/resume.hpp)
  std::optional<std::string> filter;
  std::optional<std::filesystem::path> out;
  std::optional<std::string> device;
  std::vector<std::string> axes;  // --axis NAME=VALUES (series/axes.hpp)
  bool dry_run = false;           // list the experiments (every sweep point) and stop
  bool force = false;             // --out may hold an earlier run, which is replaced
  std::optional<std::filesystem::path> history;  // --history PATH; default_history() otherwise
  bool no_history = false;                       // --no-history: record nothing
  std::optional<std::string> baseline;           // --baseline REF: gate the run against it
  GateArgs gate;
  std::optional<std::string> shard;  // "K/N": run only this shard's experiments (series/shard.hpp)
  std::optional<std::string> gpus;   // "all", "N" or "I,J,...": one worker per GPU (runner/schedule.hpp)
  std::optional<int> rounds;         // --rounds: timing rounds of every experiment, over the series' choice
  std::string program = "expr";      // how expr was called, for the next commands it prints
};

// Where runs are recorded unless --history says otherwise: $EXPR_HISTORY, else
// runs/history.sqlite (beside the run directories `expr run` makes by default).
std::filesystem::path default_history();
// Says on stderr that opening the history migrated it, when it did.
void note_migration(const history::Store& store);

// A series read, checked against its plugins and with every guess compiled: what `run` needs
// before anything runs.
struct LoadedSeries {
  series::Plan plan;
  std::vector<std::vector<expect::CompiledGuess>> guesses;  // parallel to plan.experiments
  std::vector<expect::CompiledSweepGuess> sweep_guesses;
  // Set when `plan` is one shard of the series (series/shard.hpp): the whole series as planned,
  // each point with its shard.
  std::optional<report::ShardRecord> shard;
};
// Prints every problem and returns nothing on error. `axes` are --axis options.
std::optional<LoadedSeries> load_series(const std::filesystem::path& file, const std::vector<std::string>& axes = {});

// Prints the plan's experiments, one identity a line, with their count.
void print_expansion(const series::Plan& plan);

// A command worth running next, and what it does.
struct NextStep {
  std::string command, why;
};
// How the output of `expr run`, `show` and `replay` ends: the files to open (report.html,
// summary.md), where the Chrome traces are for Perfetto, TensorBoard and HTA, and the next commands.
void print_ending(const report::RunDirectory& dir, const std::vector<NextStep>& next);
// The guesses a recorded run is judged with again (replay, merge): those recorded, with the series'
// own replaced by those of `series_file` when one is given. `planned` is every experiment of the
// series, as guesses that name a family resolve against it. Throws util::InputError.
struct RecordedGuesses {
  std::map<std::string, std::vector<expect::CompiledGuess>> points;  // per experiment
  std::vector<expect::CompiledSweepGuess> sweeps;
};
RecordedGuesses recorded_guesses(const report::RunResult& recorded, const std::vector<report::PlannedPoint>& planned,
                                 const std::optional<std::filesystem::path>& series_file);
// Whether `out` is the directory `input` itself (one inode, however each is written): writing
// there would clear what is still to be read. Says so, naming `input` as `what`.
bool out_is_input(const std::filesystem::path& out, const std::filesystem::path& input, std::string_view what);
// Judges the recorded experiments again into `run` and tells the outputs: the run directory `out`
// when given (results.json, reports, traces, expr.log, which begins with `story`: what is being
// judged again; an earlier run there is replaced only with `force`), the terminal report always.
ExitCode judge_again(report::RunResult& run, report::RunResult recorded, RecordedGuesses guesses, std::vector<report::PlannedPoint> planned,
                     const std::optional<std::filesystem::path>& out, bool force, std::string_view story);

// Whether this expr can run experiments: false in a build without CUDA (EXPR_WITH_CUDA=OFF), whose
// run, calibrate and slurm say so and exit with bad_input (cli/without_runner.cpp).
extern const bool has_runner;
int run(const RunArgs& args);

// One --threshold, METRIC=FRACTION (gpu_time=3% or gpu_time=0.03); throws std::invalid_argument
// saying what is wrong with it. The command line checks each while it is parsed (cli/main.cpp).
std::pair<std::string, double> parse_threshold(const std::string& option);
// The gate's options from the command line, whose thresholds were checked while it was parsed.
history::CompareOptions gate_options(const GateArgs& args);
// A run directory, or a history reference (@last, @last~N, @last-good, @ID) resolved within
// `series`; throws std::runtime_error saying what was not found.
history::RunRecord load_run(const std::string& what, history::Store* store, const std::string& series);
// Each point's noise between processes learnt from the newest runs of the candidate's series on
// its machine in `store`, the two compared left out (history::history_noise): into options.history.
void learn_noise(history::Store& store, const history::RunRecord& base, const history::RunRecord& candidate, history::CompareOptions& options);

struct CalibrateArgs {
  RunArgs run;  // the series, --filter, --device, --axis, --out, --history
  std::size_t runs = 5;
  GateArgs gate;
};
int calibrate(const CalibrateArgs& args);
int validate(const std::filesystem::path& series, const std::vector<std::string>& axes);
int list(const std::vector<std::filesystem::path>& extra_dirs);
// `program` is how expr was called, for the command that resumes an incomplete run.
// all: every experiment in the report, however many (report::listed_at_most otherwise).
int show(const std::filesystem::path& run_dir, const std::string& program, bool all);
// The shell command that resumes the run in `run_dir`.
std::string resume_command(const std::string& program, const std::filesystem::path& run_dir);
// A word for the shell: as it is when it needs no quoting, else in single quotes.
std::string shell_word(const std::string& word);
// Where a run of `series` goes unless --out says otherwise: runs/<series><suffix>-<time>.
std::filesystem::path default_run_dir(const std::string& series, const std::string& suffix = "");

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
// `program` is how expr was called, for the next commands it prints.
int replay(const std::filesystem::path& run_dir, const std::optional<std::filesystem::path>& series,
           const std::optional<std::filesystem::path>& out, bool force, const std::string& program);
// One run directory from the run directories of a series' shards: every guess judged again over
// all of them, the missing experiments named with their shard. Refuses shards of different series
// or environments unless `allow_mixed`.
int merge(const std::vector<std::filesystem::path>& shard_dirs, const std::filesystem::path& out, bool allow_mixed, bool force);

// Creates and locks a run directory for `run` or `replay` (report::RunDirectory::create). On
// refusal prints why and gives the exit code in `refused`.
std::optional<report::RunLock> open_run_directory(const report::RunDirectory& dir, bool force, int& refused);
int metrics();

// `expr new plugin NAME [--torch|--cuda] [--dir D]`: a plugin project outside expr's tree (a
// CMakeLists.txt with find_package(expr), NAME.cpp or NAME.cu, a series NAME.yaml with one guess
// the trace should confirm and one it should contradict, a README) in D, by default ./NAME.
enum class PluginKind { cpu, torch, cuda };
int new_plugin(const std::string& name, PluginKind kind, const std::optional<std::filesystem::path>& dir);
// `expr new series NAME [--plugin P] [--dir D]`: a commented series file D/NAME.yaml running P.
int new_series(const std::string& name, const std::optional<std::string>& plugin, const std::optional<std::filesystem::path>& dir);
struct HistoryArgs {
  std::optional<std::filesystem::path> history;
  std::string series;      // only this series
  std::string experiment;  // with metric: this experiment's figure over time
  std::string metric = "gpu_time";
  std::size_t limit = 20;
  GateArgs gate;  // what counts as a step
};
int history(const HistoryArgs& args);

struct CompareArgs {
  std::string base, candidate;  // run directories or history references (@last, @last~N, @last-good, @ID)
  std::optional<std::filesystem::path> history;
  std::string series;  // for references when the history holds several series and NEW names none
  GateArgs gate;
  std::optional<std::filesystem::path> markdown;  // also write the comparison here
};
int compare(const CompareArgs& args);

struct AcrossArgs {
  std::vector<std::string> runs;  // run directories or history references, @each-machine among them
  std::optional<std::filesystem::path> history;
  std::string series;        // for references when the history holds several series and no directory names one
  std::size_t reference = 1;  // the run ratios are taken to, counting from 1 in the order given
  std::optional<std::filesystem::path> json, html;  // also write the view here
};
int across(const AcrossArgs& args);

}  // namespace expr::cli
