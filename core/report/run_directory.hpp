// A run directory: every path in it and the results schema, in one place.
//
//   RUN_DIR/results.json                         the run, schema expr.results/2, rewritten after each experiment
//   RUN_DIR/summary.md, junit.xml                reports, rewritten with it
//   RUN_DIR/report.html, plots/*.svg             the page with plots (html_report.hpp), written when the run ends
//   RUN_DIR/series.yaml                          the series file as it was run
//   RUN_DIR/experiments/NAME/expr_trace.json     the native trace (`expr replay` reads it)
//   RUN_DIR/experiments/NAME/chrome_trace.json   the same trace for Perfetto and chrome://tracing
//   RUN_DIR/experiments/NAME/worker.log          what the experiment's worker printed
//   RUN_DIR/experiments/NAME/cold_trace.json     the cold first call traced, when a guess reads cold.*
//   RUN_DIR/experiments/NAME/cold_worker.log     what that second worker printed
//
// Reading accepts expr.results/1 as well, so recorded runs keep replaying.
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
  std::filesystem::path html_report() const { return root_ / "report.html"; }
  std::filesystem::path plots() const { return root_ / "plots"; }
  std::filesystem::path series_copy() const { return root_ / "series.yaml"; }
  std::filesystem::path experiment(const std::string& name) const { return root_ / "experiments" / name; }
  std::filesystem::path native_trace(const std::string& name) const { return experiment(name) / "expr_trace.json"; }
  std::filesystem::path chrome_trace(const std::string& name) const { return experiment(name) / "chrome_trace.json"; }
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
