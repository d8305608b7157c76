// How well a timing figure is known. A median from one run is uncertain twice over: its own samples
// scatter (the order statistics give an interval for it), and on a shared or virtual machine the
// whole run shifts from one run to the next by more than that (what `expr calibrate` measures and
// outcome::Stats::run_to_run carries). Guesses that compare timings and `expr compare` both use the
// interval below, so the two never disagree about what "within noise" means.
#pragma once

#include <optional>

#include "outcome/measurement.hpp"
#include "util/statistics.hpp"

namespace expr::analysis {

// The confidence of every timing interval.
inline constexpr double timing_confidence = 0.95;

// Where the median of `stats` lies at timing_confidence: the order-statistic interval of its raw
// samples, widened in log space by the run-to-run noise when the point was calibrated:
// half-width sqrt(w^2 + (z * run_to_run)^2). Empty for runs recorded without samples.
std::optional<util::Interval> median_interval(const outcome::Stats& stats);

}  // namespace expr::analysis
