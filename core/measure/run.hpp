// `expr run` and `expr calibrate`: a series run on this machine's devices, recorded in the history
// and, with --baseline, gated against a baseline; or run several times unchanged to measure its
// noise. The command line prints what each step returns (cli/run.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "history/calibration.hpp"
#include "history/compare.hpp"
#include "measure/execute.hpp"
#include "session/options.hpp"
#include "session/prepared_run.hpp"
#include "session/status.hpp"

namespace expr::measure {

// The gate's verdict on a finished run.
struct Gated {
  std::optional<history::Comparison> comparison;  // absent when the baseline could not be compared
  session::Status status = session::Status::ok;   // ok, regression, or bad_input when it could not be compared
  std::vector<std::string> remeasured;            // the experiments measured once more (Comparison::to_measure_again)
};

// One `expr run`, prepared (session::prepare_run): the baseline found, the devices probed, the
// workers chosen, then executed, then gated.
class SeriesRun {
 public:
  // Stops with bad_input on a baseline that cannot be found or is of another series, --device cuda
  // without a device, or a --gpus the machine cannot give. Says which workers run, and whether the
  // timings carry calibrated noise. `probe`: started before the series was prepared, read here.
  SeriesRun(const session::RunArgs& args, session::PreparedRun prepared, runner::PendingProbe& probe);

  // Runs what the run has no result for; stops with cannot_write when the run directory cannot be
  // written, or is refused.
  Executed execute();
  bool gated() const { return base_.has_value(); }
  // The finished run against its baseline: the experiments with a timing called slower, or
  // inconclusive where more samples can settle it, are measured once more (into RUN_DIR/remeasured,
  // those timings' new measurements taking the place of the first ones in the comparison and the
  // history), then the gate decides; the comparison goes to summary.md and
  // junit.xml, the verdict to the history (an error there into executed.history_error). Stops with
  // cannot_write when the second measurement cannot be written.
  Gated gate(Executed& executed);

  const history::Store* store() const { return prepared_.store.get(); }
  bool calibrated() const { return !how_.noise.empty(); }
  const report::RunDirectory& dir() const { return *prepared_.dir; }

 private:
  std::vector<std::string> remeasure(const history::Comparison& first, const std::vector<history::TimingKey>& again, const report::RunResult& run,
                                     history::RunRecord& candidate);

  const session::RunArgs& args_;
  session::PreparedRun prepared_;
  std::optional<history::RunRecord> base_;
  runner::DeviceProbe probe_;
  Execution how_;
};

// `expr calibrate`: the runs, and the calibration stored from them.
struct Calibrated {
  history::Calibration calibration;
  std::int64_t id = 0;                     // in the history
  std::filesystem::path history_file, report_file;
  std::string series;
  std::optional<report::RunResult> interrupted;  // the run a signal stopped, when one did
  int signal = 0;
  session::Status status = session::Status::ok;  // experiment_failed when an experiment of any run failed
};
// Stops with bad_input on a wrong series, with cannot_write when a run directory or the history
// cannot be written.
Calibrated calibrate(const session::CalibrateArgs& args);

}  // namespace expr::measure
