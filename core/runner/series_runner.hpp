// Runs the experiments of a plan one after another, each in its own worker process, and tells an
// observer what happens so results can be written as soon as each experiment ends.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "runner/measurement.hpp"
#include "series/plan.hpp"

namespace expr::runner {

// What a worker found out about the machine's CUDA devices; asked once per run.
struct DeviceProbe {
  int devices = 0;
  std::string unavailable;  // why there is no device
  std::map<std::string, std::string> environment;
};
DeviceProbe probe_devices();

struct RunOptions {
  std::filesystem::path run_dir;
  std::optional<std::string> filter;  // regex on experiment names; others are recorded as skipped
  std::optional<Device> device;       // overrides the series' choice
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void started(const series::ExperimentPlan& experiment, std::size_t index, std::size_t total) = 0;
  virtual void progress(std::string_view phase, std::string_view detail) = 0;
  virtual void log(std::string_view experiment, LogLevel level, std::string_view message) = 0;
  // With the trace loaded, if one was recorded.
  virtual void finished(const Measurement& measurement) = 0;
};

// Paths inside a run directory.
std::filesystem::path experiment_dir(const std::filesystem::path& run_dir, const std::string& experiment);

void run_series(const series::Plan& plan, const DeviceProbe& probe, const RunOptions& options, RunObserver& observer);

}  // namespace expr::runner
