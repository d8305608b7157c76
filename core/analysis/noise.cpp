// The interval of a timing median, and how far a figure moves between processes and between runs.
#include "analysis/noise.hpp"

#include <algorithm>
#include <cmath>

namespace expr::analysis {

std::vector<double> round_medians(const outcome::Stats& stats) {
  return stats.rounds.empty() ? std::vector<double>{stats.median} : stats.rounds;
}

double log_figure(const outcome::Stats& stats) {
  const auto medians = round_medians(stats);
  double sum = 0;
  for (double m : medians) sum += std::log(m);
  return sum / static_cast<double>(medians.size());
}

Noise log_spread(const std::vector<double>& medians) {
  if (medians.size() < 2) return {};
  std::vector<double> logs;
  for (double m : medians) logs.push_back(std::log(m));
  util::require_finite(logs, "the logs of positive medians");
  return {util::standard_deviation(logs), static_cast<double>(logs.size() - 1)};
}

Noise between_processes(const outcome::Stats& stats) { return log_spread(round_medians(stats)); }

Noise between_runs(const std::vector<outcome::Stats>& runs) {
  std::vector<double> figures;
  for (const auto& r : runs)
    if (r.median > 0) figures.push_back(log_figure(r));
  util::require_finite(figures, "the logs of positive medians");
  const double n = static_cast<double>(figures.size());
  if (figures.size() < 2) return {};
  double squares = 0;
  for (std::size_t i = 1; i < figures.size(); ++i) squares += (figures[i] - figures[i - 1]) * (figures[i] - figures[i - 1]);
  return {std::sqrt(squares / (2 * (n - 1))), 2 * (n - 1) * (n - 1) / (3 * n - 4)};
}

Noise calibrated(const outcome::Stats& stats) {
  // A calibration that saw no noise at all (unchanged runs of a busy-waiting plugin on a quiet
  // machine have identical medians) is known, with sigma 0: only the degrees of freedom say so.
  if (stats.run_to_run_df > 0) return {stats.run_to_run, stats.run_to_run_df};
  if (stats.run_to_run > 0) return {stats.run_to_run, 1.0};
  return {};
}

Noise pool(const std::vector<Noise>& estimates) {
  double squares = 0, df = 0;
  for (const auto& e : estimates) {
    squares += e.sigma * e.sigma * e.df;
    df += e.df;
  }
  return df > 0 ? Noise{std::sqrt(squares / df), df} : Noise{};
}

double reach(const Noise& noise, double q) { return util::student_t_quantile(q, noise.df) * noise.sigma; }

Noise further_reaching(const Noise& a, const Noise& b, double q) {
  if (!a.known()) return b;
  if (!b.known()) return a;
  return reach(a, q) >= reach(b, q) ? a : b;
}

Noise figure_noise(const outcome::Stats& stats) {
  auto rounds = between_processes(stats);
  rounds.sigma /= std::sqrt(static_cast<double>(round_medians(stats).size()));
  return further_reaching(rounds, calibrated(stats), two_sided_quantile);
}

std::optional<util::Interval> median_interval(const outcome::Stats& stats) {
  if (stats.samples.empty() || stats.median <= 0) return std::nullopt;
  const auto within = util::median_interval(stats.samples, timing_confidence);
  const auto noise = figure_noise(stats);
  if (!noise.known() || within.low <= 0) return within;
  // The samples' interval is around their pooled median, which need not be the median of rounds:
  // only how far it reaches beyond the figure counts.
  const double between = reach(noise, two_sided_quantile);
  const double below = std::max(0.0, std::log(stats.median / within.low)), above = std::max(0.0, std::log(within.high / stats.median));
  return util::Interval{stats.median * std::exp(-std::hypot(below, between)), stats.median * std::exp(std::hypot(above, between))};
}

}  // namespace expr::analysis
