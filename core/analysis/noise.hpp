// How well a timing figure is known. A run's figure (the median of its rounds' medians) is
// uncertain three times over: its own samples scatter (the order statistics give an interval for
// it); the figure shifts from one worker process to the next by more than that (on the H200 host
// times move 2-3x between processes), which the rounds of the run show (one process each,
// outcome::Stats::rounds); and the whole machine shifts from one run to the next by more than its
// processes within a run do (on the 2-core CI machine the CPU series' host times read 4.2 ms or
// 7.5 ms in stretches of a second or more, so that all rounds of a two-second run often land in
// one), which only other runs can show: earlier runs in the history and `expr calibrate`
// (outcome::Stats::run_to_run). Guesses that compare timings and `expr compare` both use the
// estimates below, so the two never disagree about what "within noise" means.
#pragma once

#include <optional>
#include <vector>

#include "outcome/measurement.hpp"
#include "util/statistics.hpp"

namespace expr::analysis {

// The confidence of every timing interval.
inline constexpr double timing_confidence = 0.95;

// An estimate of the standard deviation of a logged figure (log of a process's or a run's median),
// with its degrees of freedom (0: nothing known).
struct Noise {
  double sigma = 0;
  double df = 0;
  bool known() const { return df > 0; }
};

// The figure's round medians: Stats::rounds, or for a run recorded before rounds existed its
// median as one round.
std::vector<double> round_medians(const outcome::Stats& stats);
// A run's figure in log space: the mean of the logs of its round medians (the log of their
// geometric mean), what comparisons between runs test.
double log_figure(const outcome::Stats& stats);

// The spread of positive values (medians of processes or runs): the standard deviation of their
// logs, with one degree of freedom fewer than values.
Noise log_spread(const std::vector<double>& medians);
// How far one figure moves between the worker processes of one run: log_spread of its round medians.
Noise between_processes(const outcome::Stats& stats);
// How far the figure moves between runs on one machine, from its runs in order (oldest first):
// von Neumann's mean square successive difference of their log_figure, half of it, so that a step
// in the history (a change that landed) counts in one difference rather than in every run after
// it. Its degrees of freedom are those of a sample variance with the same variance for normal
// noise, 2(n-1)^2/(3n-4) for n runs: 1 for two runs, 4.9 for eight, 12.9 for twenty.
Noise between_runs(const std::vector<outcome::Stats>& runs);
// The point's calibrated run-to-run noise (`expr calibrate`: how far its run figure moved between
// unchanged runs) with its degrees of freedom, which say whether it was calibrated (its sigma may
// be 0); one recorded before they were kept counts as the fewest it can have: df 1.
Noise calibrated(const outcome::Stats& stats);
// Estimates of one sigma pooled: the sum of sigma^2 df over the sum of df.
Noise pool(const std::vector<Noise>& estimates);
// How far a bound at Student's quantile q reaches: t(q, df) sigma.
double reach(const Noise& noise, double q);
// Of two estimates of one spread, the one whose bound at quantile q reaches further, since a bound
// must hold under each (an estimate of few degrees of freedom is a wide bound even when its sigma
// is small); the known one where only one is.
Noise further_reaching(const Noise& a, const Noise& b, double q);
// The quantile of a two-sided interval at timing_confidence.
inline constexpr double two_sided_quantile = 1 - (1 - timing_confidence) / 2;

// How far this run's figure is from where another run of it would put it, as far as the run knows:
// its rounds' spread over the square root of their number, or the calibration's run-to-run noise
// where its bound at timing_confidence reaches further (further_reaching). Within one run only its
// rounds speak, which is right for guesses that compare two experiments of the run (one machine
// state for both).
Noise figure_noise(const outcome::Stats& stats);

// Where the figure of `stats` lies at timing_confidence: the order-statistic interval of its raw
// samples, widened in log space by figure_noise to half-width sqrt(w^2 + (t sigma)^2), t the
// quantile of Student's t with that noise's degrees of freedom. The samples' interval alone for one
// round of an uncalibrated point. Empty for runs recorded without samples.
std::optional<util::Interval> median_interval(const outcome::Stats& stats);

}  // namespace expr::analysis
