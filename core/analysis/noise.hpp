// How well a timing figure is known. A median from one run is uncertain twice over: its own samples
// scatter (the order statistics give an interval for it), and the whole figure shifts from one
// worker process to the next by more than that (on the H200 host times move 2-3x between
// processes), which the samples of one process cannot show: the rounds of a run (one process
// each, outcome::Stats::rounds), earlier runs in the history and `expr calibrate`
// (outcome::Stats::run_to_run) can. Guesses that compare timings and `expr compare` both use the
// interval below, so the two never disagree about what "within noise" means.
#pragma once

#include <optional>
#include <vector>

#include "outcome/measurement.hpp"
#include "util/statistics.hpp"

namespace expr::analysis {

// The confidence of every timing interval.
inline constexpr double timing_confidence = 0.95;

// Where the median of `stats` (the median of its rounds' medians) lies at timing_confidence: the
// order-statistic interval of its raw samples, widened in log space by the noise between processes
// (median_noise below) to half-width sqrt(w^2 + (t * sigma / sqrt(rounds))^2), t the quantile of
// Student's t with that noise's degrees of freedom, as `expr compare` widens a difference of two
// runs. The samples' interval alone for one round of an uncalibrated point. Empty for runs
// recorded without samples.
std::optional<util::Interval> median_interval(const outcome::Stats& stats);

// The figure's round medians: Stats::rounds, or for a run recorded before rounds existed its
// median as one round.
std::vector<double> round_medians(const outcome::Stats& stats);

// How far a figure moves between worker processes: an estimate of the standard deviation of
// log(median) from one process to the next, with its degrees of freedom (0: nothing known).
struct ProcessNoise {
  double sigma = 0;
  double df = 0;
  bool known() const { return df > 0; }
};
// The spread of positive values (medians of processes or runs): the standard deviation of their
// logs, with one degree of freedom fewer than values.
ProcessNoise log_spread(const std::vector<double>& medians);
// The between-process spread of one figure: log_spread of its round medians.
ProcessNoise between_processes(const outcome::Stats& stats);
// The point's calibrated run-to-run noise (`expr calibrate`) with its degrees of freedom, which
// say whether it was calibrated (its sigma may be 0); one recorded before they were kept counts as
// the fewest it can have, two runs of one process: df 1.
ProcessNoise calibrated(const outcome::Stats& stats);
// Estimates of one sigma pooled: the sum of sigma^2 df over the sum of df.
ProcessNoise pool(const std::vector<ProcessNoise>& estimates);
// What one run knows of how far the figure moves between processes: its rounds' spread and its
// calibration, pooled.
ProcessNoise median_noise(const outcome::Stats& stats);

}  // namespace expr::analysis
