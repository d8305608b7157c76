// Runs the experiments of a plan, each in its own worker process on the device it is placed on,
// and tells an observer what happens, experiment by experiment, so results can be written as soon
// as each one ends. The parent waits on all its workers at once; today it keeps one busy at a time.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "outcome/measurement.hpp"
#include "runner/experiment.hpp"
#include "runner/interrupt.hpp"
#include "series/plan.hpp"

namespace expr::runner {

// What a worker found out about the machine's CUDA devices; asked once per run.
struct DeviceProbe {
  int devices = 0;
  std::string unavailable;  // why there is no device
  std::map<std::string, std::string> environment;
};
DeviceProbe probe_devices();

// Where a worker leaves its files; the run directory (report/run_directory.hpp) decides.
struct ExperimentFiles {
  std::filesystem::path trace;       // the native trace of the traced iterations
  std::filesystem::path log;         // the worker's stdout and stderr
  std::filesystem::path cold_trace;  // the cold call's trace, when a guess reads it (cold_trace.hpp)
  std::filesystem::path cold_log;    // that second worker's stdout and stderr
};

struct RunOptions {
  std::function<ExperimentFiles(const std::string& experiment)> files;
  std::optional<std::string> filter;  // regex on experiment names; others are recorded as skipped
  std::optional<Device> device;       // overrides the series' choice
  const Interrupts* interrupts = nullptr;  // SIGINT and SIGTERM stop the run (interrupt.hpp); none: not watched
};

// How long a worker has to stop after the run is interrupted, before it is killed.
inline constexpr std::chrono::seconds stop_grace{3};

// Callbacks name the experiment they are about: with several workers, events of different
// experiments interleave.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void started(const series::ExperimentPlan& experiment, const Placement& placement) = 0;
  virtual void progress(const std::string& experiment, std::string_view phase, std::string_view detail) = 0;
  virtual void log(const std::string& experiment, LogLevel level, std::string_view message) = 0;
  // Once per experiment of the plan, skipped ones included, in no promised order. The trace, if
  // one was recorded, is found through measurement.trace.
  virtual void finished(outcome::Measurement measurement) = 0;
};

void run_series(const series::Plan& plan, const DeviceProbe& probe, const RunOptions& options, RunObserver& observer);

}  // namespace expr::runner
