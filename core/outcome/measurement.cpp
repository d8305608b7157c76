// Loading a measurement's trace when it is first read; a timing round's share of the budget.
#include "outcome/measurement.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "trace/trace_file.hpp"

namespace expr::outcome {

Iterations Iterations::round_share() const {
  auto share = *this;
  const int n = std::max(rounds, 1);
  share.min_samples = (min_samples + n - 1) / n;
  share.min_time = min_time / n;
  share.max_time = max_time / n;
  // The figure is the median of n round medians, whose variance is at most pi/(2n) times one
  // round's for n >= 2 (0.5 for two, 0.449 for three, pi/(2n) as n grows): rounds each known to
  // max_noise * sqrt(2n/pi) leave the figure known to max_noise.
  if (n >= 2) share.max_noise = max_noise * std::sqrt(2.0 * n / std::numbers::pi);
  return share;
}


struct TraceSource::State {
  std::filesystem::path file;
  std::once_flag once;
  std::shared_ptr<const trace::Trace> trace;
};

TraceSource::TraceSource(std::shared_ptr<const trace::Trace> trace) : state_(std::make_shared<State>()) {
  state_->trace = std::move(trace);
  std::call_once(state_->once, [] {});
}

TraceSource::TraceSource(std::filesystem::path file) : state_(std::make_shared<State>()) { state_->file = std::move(file); }

const trace::Trace& TraceSource::operator*() const {
  // A load that throws leaves the flag unset, so the next reader tries again and sees the same error.
  std::call_once(state_->once, [this] { state_->trace = std::make_shared<const trace::Trace>(trace::load(state_->file)); });
  return *state_->trace;
}

const std::filesystem::path& TraceSource::file() const {
  static const std::filesystem::path none;
  return state_ ? state_->file : none;
}

}  // namespace expr::outcome
