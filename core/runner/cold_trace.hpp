// The cold first call's own trace. The measuring worker times its first call with tracing off,
// because tracing distorts timing; when a guess reads cold.* (the plan marks the experiment), a
// second, fresh worker does the same setup and traces that first call instead, so guesses can see
// what the cold call did: host ranges, framework ops, API calls, device activity.
#pragma once

#include <string>

#include "outcome/measurement.hpp"
#include "outcome/placement.hpp"
#include "runner/experiment.hpp"
#include "runner/worker.hpp"
#include "series/plan.hpp"

namespace expr::runner {

using outcome::ExperimentFiles;

// What the cold-trace worker runs: setup, then one traced call saved to files.cold_trace. `shared`:
// the run's shared directory (Context::shared_directory).
void cold_trace_job(Channel& channel, const series::ExperimentPlan& experiment, const Placement& placement, const ExperimentFiles& files,
                    const std::filesystem::path& shared);

// The cold call as the parent knows it once its worker is gone. Never fails for the plugin's
// failure: a crash or a timeout is the measurement's status and reason, which cold.* guesses give
// as their reason.
outcome::Measurement conclude_cold_trace(const series::ExperimentPlan& experiment, const Placement& placement,
                                         const ExperimentFiles& files, const WorkerExit& exit, const std::string& error);

}  // namespace expr::runner
