// The interval of a timing median, and how far a figure moves between processes.
#include "analysis/noise.hpp"

#include <algorithm>
#include <cmath>

namespace expr::analysis {

std::optional<util::Interval> median_interval(const outcome::Stats& stats) {
  if (stats.samples.empty() || stats.median <= 0) return std::nullopt;
  const auto within = util::median_interval(stats.samples, timing_confidence);
  const auto noise = median_noise(stats);
  if (!noise.known() || within.low <= 0) return within;
  // The samples' interval is around their pooled median, which need not be the median of rounds:
  // only how far it reaches beyond the figure counts.
  const double rounds = static_cast<double>(round_medians(stats).size());
  const double between = util::student_t_quantile(1 - (1 - timing_confidence) / 2, noise.df) * noise.sigma / std::sqrt(rounds);
  const double below = std::max(0.0, std::log(stats.median / within.low)), above = std::max(0.0, std::log(within.high / stats.median));
  return util::Interval{stats.median * std::exp(-std::hypot(below, between)), stats.median * std::exp(std::hypot(above, between))};
}

ProcessNoise median_noise(const outcome::Stats& stats) { return pool({between_processes(stats), calibrated(stats)}); }

std::vector<double> round_medians(const outcome::Stats& stats) {
  return stats.rounds.empty() ? std::vector<double>{stats.median} : stats.rounds;
}

ProcessNoise log_spread(const std::vector<double>& medians) {
  if (medians.size() < 2) return {};
  std::vector<double> logs;
  for (double m : medians) logs.push_back(std::log(m));
  util::require_finite(logs, "the logs of positive medians");
  return {util::standard_deviation(logs), static_cast<double>(logs.size() - 1)};
}

ProcessNoise between_processes(const outcome::Stats& stats) { return log_spread(round_medians(stats)); }

ProcessNoise calibrated(const outcome::Stats& stats) {
  // A calibration that saw no noise at all (unchanged runs of a busy-waiting plugin on a quiet
  // machine have identical medians) is known, with sigma 0: only the degrees of freedom say so.
  if (stats.run_to_run_df > 0) return {stats.run_to_run, stats.run_to_run_df};
  if (stats.run_to_run > 0) return {stats.run_to_run, 1.0};
  return {};
}

ProcessNoise pool(const std::vector<ProcessNoise>& estimates) {
  double squares = 0, df = 0;
  for (const auto& e : estimates) {
    squares += e.sigma * e.sigma * e.df;
    df += e.df;
  }
  return df > 0 ? ProcessNoise{std::sqrt(squares / df), df} : ProcessNoise{};
}

}  // namespace expr::analysis
