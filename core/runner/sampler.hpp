// When to stop timing: after enough samples and time, once the relative noise of the samples is
// under the target; or when the time budget is spent, marked as not converged.
#pragma once

#include <vector>

#include "runner/measurement.hpp"
#include "series/series.hpp"

namespace expr::runner {

class Sampler {
 public:
  explicit Sampler(const series::Iterations& criteria) : criteria_(criteria) {}

  void add(double ns) { samples_.push_back(ns); }
  void add(const std::vector<double>& ns) { samples_.insert(samples_.end(), ns.begin(), ns.end()); }
  bool done(double elapsed_seconds) const;
  Stats stats(double elapsed_seconds) const;
  std::size_t count() const { return samples_.size(); }
  double noise() const;

 private:
  series::Iterations criteria_;
  std::vector<double> samples_;
};

}  // namespace expr::runner
