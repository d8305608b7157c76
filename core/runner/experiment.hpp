// One experiment, run inside a worker process: setup, a cold first call timed on its own, warm-up,
// timed iterations with tracing off, traced iterations, teardown.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

#include "outcome/measurement.hpp"
#include "series/plan.hpp"

namespace expr::runner {

// Where an experiment runs: the kind of device, and which one of that kind.
struct Placement {
  Device device = Device::cpu;
  int index = 0;
};

struct ExperimentEvents {
  // Phase names: setup, first call, warm-up, timing host, timing device, tracing, teardown.
  std::function<void(std::string_view phase, std::string_view detail)> progress;
  std::function<void(LogLevel, std::string_view)> log;
};

// Never throws for a plugin's failure: it is recorded in the measurement's status and reason, with
// everything measured before it kept. The trace (if any) is saved to `trace_file`.
outcome::Measurement run_experiment(const series::ExperimentPlan& plan, const Placement& placement, const std::filesystem::path& trace_file,
                           const ExperimentEvents& events);

}  // namespace expr::runner
