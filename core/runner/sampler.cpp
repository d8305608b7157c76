#include "runner/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace expr::runner {

double Sampler::noise() const {
  if (samples_.size() < 2) return INFINITY;
  const double n = static_cast<double>(samples_.size());
  const double mean = std::accumulate(samples_.begin(), samples_.end(), 0.0) / n;
  double sq = 0;
  for (double s : samples_) sq += (s - mean) * (s - mean);
  return mean > 0 ? std::sqrt(sq / (n - 1)) / mean : INFINITY;
}

bool Sampler::done(double elapsed) const {
  if (elapsed >= criteria_.max_time && !samples_.empty()) return true;
  if (samples_.size() < static_cast<std::size_t>(criteria_.min_samples) || elapsed < criteria_.min_time) return false;
  return noise() <= criteria_.max_noise;
}

Stats Sampler::stats(double elapsed) const {
  Stats s;
  s.samples = samples_.size();
  s.seconds = elapsed;
  if (samples_.empty()) return s;
  auto sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  const auto n = sorted.size();
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  s.noise = noise();
  if (!std::isfinite(s.noise)) s.noise = 0;
  s.converged = samples_.size() >= static_cast<std::size_t>(criteria_.min_samples) && elapsed >= criteria_.min_time &&
                noise() <= criteria_.max_noise;
  return s;
}

}  // namespace expr::runner
