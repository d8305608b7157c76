// The stopping rule, the robust summary of timing samples, and rounds combined into one figure.
#include "runner/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "util/statistics.hpp"

namespace expr::runner {

namespace {

double median_of_sorted(const std::vector<double>& v) {
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The samples' spread (their standard deviation estimated from the median absolute deviation,
// relative to the median) and their noise (the standard error of the median that follows from it,
// 1.2533 sigma / sqrt(n) for near-normal data, relative to the median): what max_noise bounds.
struct Summary {
  double median = 0, spread = 0, noise = 0;
};

Summary summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Summary s;
  s.median = median_of_sorted(v);
  for (auto& x : v) x = std::fabs(x - s.median);
  std::sort(v.begin(), v.end());
  const double sigma = 1.4826 * median_of_sorted(v);
  s.spread = s.median > 0 ? sigma / s.median : 0;
  s.noise = s.spread * 1.2533 / std::sqrt(static_cast<double>(v.size()));
  return s;
}

}  // namespace

void Sampler::add(double ns) {
  if (!std::isfinite(ns))
    throw std::invalid_argument("timing sample " + std::to_string(samples_.size() + 1) + " is " + (std::isnan(ns) ? "NaN" : "infinite") +
                                ", not a time: the timer did not record it");
  samples_.push_back(ns);
}

void Sampler::add(const std::vector<double>& ns) {
  for (double x : ns) add(x);
}

bool Sampler::done(double elapsed) {
  if (samples_.empty()) return false;
  if (elapsed >= criteria_.max_time) return true;
  if (samples_.size() < static_cast<std::size_t>(criteria_.min_samples) || elapsed < criteria_.min_time) return false;
  if (samples_.size() < next_look_) return converged_;
  next_look_ = samples_.size() + samples_.size() / 8;
  converged_ = summarise(samples_).noise <= criteria_.max_noise;
  return converged_;
}

outcome::Stats Sampler::stats(double elapsed) const {
  outcome::Stats s;
  s.count = samples_.size();
  s.samples = samples_;
  s.seconds = elapsed;
  if (samples_.empty()) return s;
  const auto sp = summarise(samples_);
  s.median = sp.median;
  s.spread = sp.spread;
  s.min = *std::min_element(samples_.begin(), samples_.end());
  s.max = *std::max_element(samples_.begin(), samples_.end());
  s.mean = std::accumulate(samples_.begin(), samples_.end(), 0.0) / static_cast<double>(s.count);
  s.converged = s.count >= static_cast<std::size_t>(criteria_.min_samples) && sp.noise <= criteria_.max_noise;
  return s;
}

outcome::Stats combine_rounds(const std::vector<outcome::Stats>& rounds) {
  outcome::Stats s;
  if (rounds.empty()) return s;
  s.converged = true;
  for (const auto& r : rounds) {
    s.samples.insert(s.samples.end(), r.samples.begin(), r.samples.end());
    s.rounds.push_back(r.median);
    s.count += r.count;
    s.iterations += r.iterations;
    s.seconds += r.seconds;
    s.converged = s.converged && r.converged;
  }
  if (s.samples.empty()) return s;
  const auto summary = summarise(s.samples);
  s.spread = summary.spread;
  s.median = rounds.size() >= 2 ? util::median(s.rounds) : summary.median;
  s.min = *std::min_element(s.samples.begin(), s.samples.end());
  s.max = *std::max_element(s.samples.begin(), s.samples.end());
  s.mean = std::accumulate(s.samples.begin(), s.samples.end(), 0.0) / static_cast<double>(s.samples.size());
  return s;
}

}  // namespace expr::runner
