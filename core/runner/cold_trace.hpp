// The cold first call's own trace. The measuring worker times its first call with tracing off,
// because tracing distorts timing; when a guess reads cold.* (analysis::cold_prefix), a second,
// fresh worker does the same setup and traces that first call instead, so guesses can see what
// the cold call did: host ranges, framework ops, API calls, device activity.
//
// The series runner's one seam: observer.finished(with_cold_trace(run_isolated(...), ...)).
#pragma once

#include <filesystem>

#include "runner/measurement.hpp"
#include "runner/series_runner.hpp"
#include "series/plan.hpp"

namespace expr::runner {

// Whether any guess of the experiment reads its cold call.
bool reads_cold_trace(const series::ExperimentPlan& experiment);

// The cold call traced in a fresh worker, saved as experiments/NAME/cold_trace.json (its log in
// cold_worker.log). Never throws for the plugin's failure: a crash or a timeout is the returned
// measurement's status and reason, which cold.* guesses give as their reason.
Measurement run_cold_trace(const series::ExperimentPlan& experiment, Device device, const std::filesystem::path& run_dir,
                           RunObserver& observer);

// `measured` with its cold call traced (Measurement::cold) when a guess reads it and the
// experiment succeeded; unchanged otherwise.
Measurement with_cold_trace(Measurement measured, const series::ExperimentPlan& experiment, const std::filesystem::path& run_dir,
                            RunObserver& observer);

}  // namespace expr::runner
