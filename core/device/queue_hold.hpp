// Holding the device's launch queue: a blocking kernel on the legacy default stream keeps every
// launch the host makes after it waiting, so that a batch of calls can be enqueued whole and then
// run back to back, without the host's launch gaps between them (nvbench's "batch" measurement
// does the same). The kernel gives up after a timeout on the device's clock, so a host that waits
// for the device while the queue is held (a run() that synchronizes, or a launch queue that is
// full) is never a deadlock: the hold just ends early, and timed_out() says so.
#pragma once

#include <chrono>

namespace expr::cuda {

class QueueHold {
 public:
  QueueHold();
  ~QueueHold();
  QueueHold(const QueueHold&) = delete;
  QueueHold& operator=(const QueueHold&) = delete;

  // Enqueues the blocking kernel; the device must be idle (the flags it shares are reset). Work
  // enqueued after it on the legacy stream, or on any blocking stream, waits until release() or
  // until `timeout` has passed since the kernel started.
  void hold(std::chrono::nanoseconds timeout);
  void release();
  // Once the device is past the kernel: whether it stopped waiting on its own.
  bool timed_out() const;

 private:
  unsigned* flags_ = nullptr;  // host memory mapped into the device: [0] released, [1] timed out
};

}  // namespace expr::cuda
