// The interval of a timing median.
#include "analysis/noise.hpp"

#include <cmath>

namespace expr::analysis {

std::optional<util::Interval> median_interval(const outcome::Stats& stats) {
  if (stats.samples.empty() || stats.median <= 0) return std::nullopt;
  auto within = util::median_interval(stats.samples, timing_confidence);
  if (stats.run_to_run <= 0 || within.low <= 0) return within;
  const double z = util::normal_quantile(1 - (1 - timing_confidence) / 2);
  const double extra = z * stats.run_to_run;
  const double below = std::log(stats.median / within.low), above = std::log(within.high / stats.median);
  return util::Interval{stats.median * std::exp(-std::hypot(below, extra)), stats.median * std::exp(std::hypot(above, extra))};
}

}  // namespace expr::analysis
