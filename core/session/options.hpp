// The typed options of each command, as the command line fills them (cli/main.cpp) and the
// commands of this stage and of measure/ read them.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace expr::session {

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

struct CalibrateArgs {
  RunArgs run;  // the series, --filter, --device, --axis, --out, --history
  std::size_t runs = 5;
  GateArgs gate;
};

struct SlurmArgs {
  std::filesystem::path series;
  std::size_t shards = 1;                       // --shards N: the array's tasks, one shard each
  std::size_t gpus_per_task = 0;                // --gpus-per-task G: 0 asks Slurm for none
  std::optional<std::string> partition, time, account, qos, constraint;
  std::vector<std::string> sbatch_lines;        // --sbatch-line: more #SBATCH lines for the array
  std::optional<std::filesystem::path> out;     // the run root, on a filesystem the nodes share
  bool submit = false;                          // run sbatch, instead of printing its commands
};

struct ReplayArgs {
  std::filesystem::path run_dir;
  std::optional<std::filesystem::path> series;  // take the series' own guesses from this file
  std::optional<std::filesystem::path> out;
  bool force = false;
};

struct MergeArgs {
  std::vector<std::filesystem::path> shard_dirs;
  std::filesystem::path out;
  bool allow_mixed = false;  // merge shards of different series or environments, and show the mix
  bool force = false;
};

struct HistoryArgs {
  std::optional<std::filesystem::path> history;
  std::string series;      // only this series
  std::string experiment;  // with metric: this experiment's figure over time
  std::string metric = "gpu_time";
  std::size_t limit = 20;
  GateArgs gate;  // what counts as a step
};

struct CompareArgs {
  std::string base, candidate;  // run directories or history references (@last, @last~N, @last-good, @ID)
  std::optional<std::filesystem::path> history;
  std::string series;  // for references when the history holds several series and NEW names none
  GateArgs gate;
  std::optional<std::filesystem::path> markdown;  // also write the comparison here
  std::optional<std::filesystem::path> html;      // and as a page
};

struct AcrossArgs {
  std::vector<std::string> runs;  // run directories or history references, @each-machine among them
  std::optional<std::filesystem::path> history;
  std::string series;        // for references when the history holds several series and no directory names one
  std::size_t reference = 1;  // the run ratios are taken to, counting from 1 in the order given
  std::optional<std::filesystem::path> json, html;  // also write the view here
};

}  // namespace expr::session
