// A run directory: every path in it and the results schema, in one place.
//
//   RUN_DIR/results.json                          the run, schema expr.results/2 (schemas/), rewritten after each experiment
//   RUN_DIR/summary.md, junit.xml                 reports, rewritten with it
//   RUN_DIR/series.yaml                           the series file as it was run
//   RUN_DIR/expr.log                              expr's own log (util/log.hpp), the workers' lines included
//   RUN_DIR/traces/NAME/expr.pt.trace.json        the Chrome trace, alone in its folder: TensorBoard's profiler
//                                                 plugin finds *.pt.trace.json under RUN_DIR, and HTA reads every
//                                                 *.json of the folder it is given as one rank's trace
//   RUN_DIR/experiments/NAME/expr_trace.json      the native trace (`expr replay` reads it)
//   RUN_DIR/experiments/NAME/worker.log           what the experiment's worker printed, its log lines included
//   RUN_DIR/experiments/NAME/cold_trace.json      the cold first call traced, when a guess reads cold.*
//   RUN_DIR/experiments/NAME/cold_worker.log      what that second worker printed
//
// Reading takes every path from results.json, so older layouts (the Chrome trace at
// experiments/NAME/chrome_trace.json) read as well; it accepts expr.results/1 too, so recorded
// runs keep replaying.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "report/run_result.hpp"
#include "runner/series_runner.hpp"

namespace expr::report {

inline constexpr const char* results_schema = "expr.results/2";

class RunDirectory {
 public:
  explicit RunDirectory(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path results() const { return root_ / "results.json"; }
  std::filesystem::path summary() const { return root_ / "summary.md"; }
  std::filesystem::path junit() const { return root_ / "junit.xml"; }
  std::filesystem::path series_copy() const { return root_ / "series.yaml"; }
  std::filesystem::path log() const { return root_ / "expr.log"; }
  std::filesystem::path traces() const { return root_ / "traces"; }
  std::filesystem::path chrome_trace(const std::string& name) const { return traces() / name / "expr.pt.trace.json"; }
  std::filesystem::path experiment(const std::string& name) const { return root_ / "experiments" / name; }
  std::filesystem::path native_trace(const std::string& name) const { return experiment(name) / "expr_trace.json"; }
  std::filesystem::path worker_log(const std::string& name) const { return experiment(name) / "worker.log"; }
  std::filesystem::path cold_trace(const std::string& name) const { return experiment(name) / "cold_trace.json"; }
  std::filesystem::path cold_worker_log(const std::string& name) const { return experiment(name) / "cold_worker.log"; }

  // Creates the directory; throws std::runtime_error with the system's reason when it cannot.
  void create() const;
  // Where an experiment's worker writes (runner/series_runner.hpp); creates the experiment's folder.
  runner::ExperimentFiles files(const std::string& experiment) const;

  void write_results(const RunResult& run) const;  // atomically
  // Reads results.json; each trace is read when first used. Throws std::runtime_error naming the
  // file and the problem.
  RunResult read() const;

 private:
  std::filesystem::path root_;
};

nlohmann::json to_json(const RunResult& run, const RunDirectory& dir);

}  // namespace expr::report
