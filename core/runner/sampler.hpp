// When to stop timing: once the median is known to within `max_noise` of itself (its standard
// error, estimated robustly from the spread of the samples), after at least `min_samples` samples
// and `min_time`; or when `max_time` is spent, marked as not converged. Robust, because host timings
// have a heavy tail (a preempted call takes 10x the median) that would keep a mean-based criterion
// from ever settling, while the median they are summarised by is hardly moved by it.
#pragma once

#include <vector>

#include "outcome/measurement.hpp"

namespace expr::runner {

class Sampler {
 public:
  explicit Sampler(const outcome::Iterations& criteria) : criteria_(criteria) {}

  // A sample that is not a finite number is a failed measurement (a timer or event that did not
  // record), not a timing: std::invalid_argument says so, and the experiment fails with it rather
  // than carry a NaN into every statistic after it.
  void add(double ns);
  void add(const std::vector<double>& ns);
  // Cheap to call after every sample: the samples are summarised again only when they have grown
  // by an eighth since the last look.
  bool done(double elapsed_seconds);
  outcome::Stats stats(double elapsed_seconds) const;
  std::size_t count() const { return samples_.size(); }

 private:
  outcome::Iterations criteria_;
  std::vector<double> samples_;
  std::size_t next_look_ = 0;
  bool converged_ = false;  // at the last look
};

// One figure timed in several rounds (one worker process each, in the order they ran) as one
// Stats: every sample, each round's median in `rounds`, and with two or more rounds the median of
// those as the median, so that one odd process does not move it. Counts, iterations and seconds add
// up; converged when every round converged. Empty for no rounds.
outcome::Stats combine_rounds(const std::vector<outcome::Stats>& rounds);

}  // namespace expr::runner
