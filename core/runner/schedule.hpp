// Which experiment starts next, and in which slot, when a run keeps several workers busy at once
// (`expr run --gpus`: one slot per GPU). Kept apart from the processes so that the order can be
// tested without a GPU.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace expr::runner {

// An experiment waiting to run.
struct Job {
  std::size_t experiment = 0;  // its place in the plan
  double expected_cost = 0;    // seconds expected (the history's), or 0 when unknown
};

class Schedule {
 public:
  // Jobs start the costliest first; jobs of equal cost (all of them, without a history) in the
  // order of the plan. Throws std::invalid_argument for no slot.
  Schedule(std::size_t slots, std::vector<Job> jobs);

  struct Start {
    Job job;
    std::size_t slot = 0;  // the lowest free slot
  };
  // The job to start now, and its slot; nothing when no job is left or every slot is busy.
  std::optional<Start> next();
  // The job in `slot` has ended: the slot is free.
  void done(std::size_t slot);
  // The jobs not started yet, in the order they would start; none are left after.
  std::vector<Job> take_waiting();

  bool waiting() const { return next_ < jobs_.size(); }
  std::size_t busy() const;

 private:
  std::vector<Job> jobs_;
  std::size_t next_ = 0;
  std::vector<bool> busy_;  // per slot
};

}  // namespace expr::runner
