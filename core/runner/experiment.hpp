// One experiment, run inside a worker process: setup, a cold first call timed on its own, verify,
// warm-up, timed iterations with tracing off, traced iterations, hardware counters over one more
// iteration (where the series turns them on), teardown. Or, in a second fresh
// worker, setup and the cold first call traced (runner/cold_trace.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "outcome/measurement.hpp"
#include "outcome/placement.hpp"
#include "runner/worker.hpp"
#include "series/plan.hpp"
#include "trace/trace.hpp"

namespace expr::runner {

// Where an experiment runs (outcome/placement.hpp, below the runner so the outputs need none of it).
using outcome::Placement;

struct ExperimentEvents {
  // Phase names: setup, first call, verify, warm-up, timing host, timing device, tracing,
  // counters, cold call, teardown.
  std::function<void(std::string_view phase, std::string_view detail)> progress;
  std::function<void(LogLevel, std::string_view)> log;
  // Called just before the timed phases ("quiet" in the timeline); returns once nothing the run
  // itself does meanwhile can disturb them: the parent holds the worker here while the worker it
  // started ahead for the next job still creates its CUDA context (series_runner.cpp). None: at once.
  std::function<void()> quiet{};
};

// Never throws for a plugin's failure: it is recorded in the measurement's status and reason, with
// everything measured before it kept. The trace (if any) is saved to `trace_file`. `shared`: the
// run's shared directory, which the plugin sees as Context::shared_directory (empty: none).
outcome::Measurement run_experiment(const series::ExperimentPlan& plan, const Placement& placement, const std::filesystem::path& shared,
                                    const std::filesystem::path& trace_file, const ExperimentEvents& events);

// Setup, then the first call traced (host ranges, framework ops, device activity) and saved to
// `trace_file`; no verify, warm-up or timing. The measurement's host time is that call's run(),
// its first_call the same with the device's work; both carry the cost of tracing.
outcome::Measurement trace_cold_call(const series::ExperimentPlan& plan, const Placement& placement, const std::filesystem::path& shared,
                                     const std::filesystem::path& trace_file, const ExperimentEvents& events);

// A later timing round (outcome::Iterations::rounds): setup, a warm-up and the timing loops in a
// fresh worker, nothing traced or verified.
outcome::Measurement time_round(const series::ExperimentPlan& plan, const Placement& placement, const std::filesystem::path& shared,
                                const ExperimentEvents& events);

// The first round's measurement with the later rounds' timings joined to it (combine_rounds,
// runner/sampler.hpp); a later round that failed is named in the reason and adds nothing, and what
// the first round measured stays.
outcome::Measurement with_timing_rounds(outcome::Measurement measured, const std::vector<outcome::Measurement>& later);

// The status of a second worker (cold trace, timing round) that ended without a result: timed out,
// interrupted when the run was stopped, or crashed.
outcome::Status status_without_result(const WorkerExit& exit);

// The parent's own marks around a worker's timeline (outcome::Mark): "spawned" first, "ended" last.
void add_worker_marks(outcome::Measurement& measurement, const WorkerExit& exit);

// The setup rule check over a finished trace: when every outermost framework op of the first traced
// run() is among `seen_in_setup` (what the plugin's trace hooks saw setup dispatch), the note that
// setup ran the measured work; empty otherwise, and when the trace holds no framework ops.
std::string setup_rule_finding(const trace::Trace& trace, const std::vector<std::string>& seen_in_setup);

}  // namespace expr::runner
