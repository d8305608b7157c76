// The order and placement of experiments over the slots of a run.
#include "runner/schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace expr::runner {

Schedule::Schedule(std::size_t slots, std::vector<Job> jobs) : jobs_(std::move(jobs)), busy_(slots, false) {
  if (slots == 0) throw std::invalid_argument("a schedule needs at least one slot");
  std::stable_sort(jobs_.begin(), jobs_.end(), [](const Job& a, const Job& b) {
    if (a.expected_cost != b.expected_cost) return a.expected_cost > b.expected_cost;
    return a.experiment < b.experiment;
  });
}

std::size_t Schedule::busy() const { return static_cast<std::size_t>(std::count(busy_.begin(), busy_.end(), true)); }

std::optional<Schedule::Start> Schedule::next() {
  if (!waiting()) return std::nullopt;
  const auto free = std::find(busy_.begin(), busy_.end(), false);
  if (free == busy_.end()) return std::nullopt;
  *free = true;
  return Start{jobs_[next_++], static_cast<std::size_t>(free - busy_.begin())};
}

void Schedule::done(std::size_t slot) { busy_.at(slot) = false; }

std::vector<Job> Schedule::take_waiting() {
  std::vector<Job> out(jobs_.begin() + static_cast<std::ptrdiff_t>(next_), jobs_.end());
  next_ = jobs_.size();
  return out;
}

}  // namespace expr::runner
