// Runs the experiments of a plan, each in its own worker process on the device it is placed on
// (its later timing rounds each in a fresh one: outcome::Iterations::rounds), and tells an
// observer what happens, experiment by experiment, so results can be written as soon as each one
// ends. The parent waits on all its workers at once and keeps one busy per slot: one slot (device
// 0) by default, one per GPU with `expr run --gpus` (runner/schedule.hpp).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "outcome/measurement.hpp"
#include "outcome/placement.hpp"
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

// The probe, started in a worker of its own when this is made and read when result() is called, so
// that the CUDA driver's start there overlaps what the parent does meanwhile (loading the series
// and its plugins). Made before the parent loads plugins: a fork is cheaper from a small process.
// Destroyed unread, it kills the probe.
class PendingProbe {
 public:
  PendingProbe();
  ~PendingProbe();
  PendingProbe(const PendingProbe&) = delete;
  PendingProbe& operator=(const PendingProbe&) = delete;
  // Waits for the probe; the same answer every call.
  const DeviceProbe& result();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Where a worker leaves its files; the run directory (report/run_directory.hpp) decides
// (outcome/placement.hpp, below the runner so the run directory needs none of it).
using outcome::ExperimentFiles;

struct RunOptions {
  std::function<ExperimentFiles(const std::string& experiment)> files;
  std::optional<std::string> filter;  // regex on experiment names; others are recorded as skipped
  std::optional<Device> device;       // overrides the series' choice
  const Interrupts* interrupts = nullptr;  // SIGINT and SIGTERM stop the run (interrupt.hpp); none: not watched
  // One worker per GPU: slot i is GPU gpus[i] (as expr was given the GPUs), and a CUDA experiment's
  // worker there sees only that GPU, as its device 0; a CPU experiment takes a slot too. Empty:
  // `workers` slots, CUDA experiments on device 0 with every GPU visible, as serial runs have run.
  // A CUDA experiment records its GPU's index in its environment ("gpu_index").
  std::vector<int> gpus{};
  std::size_t workers = 1;
  // Each experiment's expected seconds, parallel to the plan: the costliest start first. Empty: the
  // plan's order.
  std::vector<double> expected_seconds{};
};

// How long a worker has to stop after the run is interrupted, before it is killed.
inline constexpr std::chrono::seconds stop_grace{3};

// Callbacks name the experiment they are about: with several workers, events of different
// experiments interleave. The workers' log lines (plugins' ctx.log among them) go to the logger
// (util/log.hpp) as "EXPERIMENT: line", not through the observer.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void started(const series::ExperimentPlan& experiment, const Placement& placement) = 0;
  virtual void progress(const std::string& experiment, std::string_view phase, std::string_view detail) = 0;
  // Once per experiment of the plan, skipped ones included, in no promised order. The trace, if
  // one was recorded, is found through measurement.trace.
  virtual void finished(outcome::Measurement measurement) = 0;
};

void run_series(const series::Plan& plan, const DeviceProbe& probe, const RunOptions& options, RunObserver& observer);

}  // namespace expr::runner
