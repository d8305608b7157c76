// A run directory: every path in it and the results schema, in one place.
//
//   RUN_DIR/results.json                          the run, schema expr.results/2 (schemas/), written when it begins and ends, and
//                                                 in between as often as costs at most 5% of the run (report/sinks.hpp)
//   RUN_DIR/experiments.jsonl                     the journal: each experiment as it finished, one JSON object a line as in
//                                                 results.json's "experiments", synced; removed once results.json holds them all.
//                                                 A run killed (kill -9, power loss) keeps it: read() overlays it on results.json
//   RUN_DIR/results.json "shard"                  a shard's index, count, series fingerprint and the whole plan (series/shard.hpp)
//   RUN_DIR/results.json "merged"                 a merged run's shards: each one's directory and its experiments without a result
//   RUN_DIR/summary.md, junit.xml                 reports, written with it
//   RUN_DIR/gate.txt                              a gated run's verdict against its baseline in a few lines (expr show prints it)
//   RUN_DIR/report.html, plots/*.svg              the page with plots (html_report.hpp), written when the run ends
//   RUN_DIR/series.yaml                           the series file as it was run (last resumed)
//   RUN_DIR/plan.json                             how the run was asked for and each point's settings (report/resume.hpp)
//   RUN_DIR/expr.log                              expr's own log (util/log.hpp), the workers' lines included
//   RUN_DIR/traces/NAME/expr.pt.trace.json        the Chrome trace, alone in its folder: TensorBoard's profiler
//                                                 plugin finds *.pt.trace.json under RUN_DIR, and HTA reads every
//                                                 *.json of the folder it is given as one rank's trace
//   RUN_DIR/experiments/NAME/expr_trace.json      the native trace (`expr replay` reads it)
//   RUN_DIR/experiments/NAME/worker.log           what the experiment's worker printed, its log lines included
//   RUN_DIR/experiments/NAME/cold_trace.json      the cold first call traced, when a guess reads cold.*
//   RUN_DIR/experiments/NAME/cold_worker.log      what that second worker printed
//
// A run holds an exclusive flock on RUN_DIR while it writes it, so two runs never write one
// directory; the kernel drops the lock when the run ends, however it ends, so none outlives it.
// Reading takes every path from results.json, so older layouts (the Chrome trace at
// experiments/NAME/chrome_trace.json) read as well; it accepts expr.results/1 too, so recorded
// runs keep replaying.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "outcome/placement.hpp"
#include "report/run_result.hpp"

namespace expr::report {

inline constexpr const char* results_schema = "expr.results/2";
inline constexpr const char* plan_schema = "expr.plan/1";

// How `expr run` was asked for: what `expr run --resume` repeats.
struct RunRequest {
  std::filesystem::path series;        // absolute, so the run resumes from any directory
  std::vector<std::string> axes;       // --axis options as given
  std::optional<std::string> filter;   // --filter
  std::optional<std::string> device;   // --device: cpu or cuda
  std::optional<std::string> shard;    // --shard K/N (series/shard.hpp)
  std::optional<int> rounds;           // --rounds: timing rounds of every experiment (outcome::Iterations)
};

// plan.json: the request and every planned point's settings (report/resume.hpp says which), by
// identity, in plan order.
struct RunPlan {
  RunRequest request;
  std::vector<std::pair<std::string, nlohmann::json>> points;
};

// Why a run may not write a directory (RunDirectory::create).
struct RunDirectoryRefused : std::runtime_error {
  enum class Why { in_use, holds_run, cannot_write } why;
  RunDirectoryRefused(Why w, const std::string& message) : std::runtime_error(message), why(w) {}
};

// The lock a run holds on its directory; released when destroyed (or when the process ends).
class RunLock {
 public:
  RunLock(RunLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  RunLock& operator=(RunLock&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~RunLock();

 private:
  friend class RunDirectory;
  explicit RunLock(int fd) : fd_(fd) {}
  int fd_;
};

class RunDirectory {
 public:
  explicit RunDirectory(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path results() const { return root_ / "results.json"; }
  std::filesystem::path journal() const { return root_ / "experiments.jsonl"; }
  std::filesystem::path summary() const { return root_ / "summary.md"; }
  std::filesystem::path junit() const { return root_ / "junit.xml"; }
  std::filesystem::path gate() const { return root_ / "gate.txt"; }
  std::filesystem::path html_report() const { return root_ / "report.html"; }
  std::filesystem::path plots() const { return root_ / "plots"; }
  std::filesystem::path series_copy() const { return root_ / "series.yaml"; }
  std::filesystem::path plan() const { return root_ / "plan.json"; }
  std::filesystem::path log() const { return root_ / "expr.log"; }
  std::filesystem::path traces() const { return root_ / "traces"; }
  // The run directory of the experiments the gate measured once more (expr run --baseline).
  std::filesystem::path remeasured() const { return root_ / "remeasured"; }
  // An experiment's folders are named after it; a name that is no file name (util/paths.hpp) is
  // refused with std::runtime_error, so none leads outside the directory.
  std::filesystem::path chrome_trace(const std::string& name) const { return traces() / folder(name) / "expr.pt.trace.json"; }
  std::filesystem::path experiment(const std::string& name) const { return root_ / "experiments" / folder(name); }
  std::filesystem::path native_trace(const std::string& name) const { return experiment(name) / "expr_trace.json"; }
  std::filesystem::path worker_log(const std::string& name) const { return experiment(name) / "worker.log"; }
  std::filesystem::path cold_trace(const std::string& name) const { return experiment(name) / "cold_trace.json"; }
  std::filesystem::path cold_worker_log(const std::string& name) const { return experiment(name) / "cold_worker.log"; }

  // Creates the directory and locks it for a run. Throws RunDirectoryRefused: in_use when another
  // process holds its lock; holds_run when it holds an earlier run (its results.json, series.yaml
  // or experiment folders) and `replace` is false (with `replace`, that run's files are removed);
  // cannot_write with the system's reason.
  RunLock create(bool replace) const;
  // Locks the directory of an earlier run to take it up again (`expr run --resume`), keeping its
  // files. Throws RunDirectoryRefused: in_use when another process holds its lock; cannot_write
  // with the system's reason (also when the directory does not exist).
  RunLock lock_for_resume() const;
  // Where an experiment's worker writes (outcome/placement.hpp). Creates the experiment's folder,
  // emptied first: what an earlier attempt at the point left there (a run stopped mid-experiment,
  // then resumed) is not this attempt's.
  outcome::ExperimentFiles files(const std::string& experiment) const;

  void write_results(const RunResult& run) const;  // atomically
  // Appends a finished experiment to the journal, synced: the same cost at the 10,000th point as at
  // the first, and nothing reported done is lost if the run is then killed.
  void journal_experiment(const ExperimentResult& experiment) const;
  // Removes the journal, once results.json holds every experiment in it.
  void retire_journal() const;
  // Reads results.json with the journal's experiments over it (a run killed before it ended has
  // its finished experiments there); each trace is read when first used. Throws
  // std::runtime_error naming the file (and line) and the problem.
  RunResult read() const;

  void write_plan(const RunPlan& plan) const;  // atomically
  // Throws std::runtime_error naming the file and the problem.
  RunPlan read_plan() const;

 private:
  // Takes the directory's lock (creating the directory first when `create`), or throws RunDirectoryRefused.
  RunLock lock(bool create) const;
  // Puts each experiment of the journal into `run`, replacing one of the same name: later records are newer.
  void read_journal(RunResult& run) const;
  static const std::string& folder(const std::string& experiment);
  std::filesystem::path root_;
};

nlohmann::json to_json(const RunResult& run, const RunDirectory& dir);
// results.json's text of a document: indented, but each array of numbers (a timing's samples) on one
// line, so that a recorded run stays small and readable.
std::string results_text(const nlohmann::json& document);

}  // namespace expr::report
