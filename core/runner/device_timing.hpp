// Device time per iteration, taken two ways from the same calls (runner/experiment.cpp's timing
// phase): gpu_time with the launch queue held, so the calls run back to back whatever the host's
// launch time, and loop_time as a plain loop launches them, the host's gaps included. The
// algorithm takes the device as a parameter, so tests drive it with a fake one (as libkineto's
// record logic takes CuptiActivityApi).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "outcome/measurement.hpp"
#include "runner/sampler.hpp"

namespace expr::runner {

// What device timing asks of the device: in a worker, CUDA events and device/queue_hold.hpp.
class DeviceClock {
 public:
  virtual ~DeviceClock() = default;
  virtual void synchronize() = 0;  // waits until the device is idle
  // Work enqueued after hold() waits until release(), or until `timeout` passed on the device.
  virtual void hold(std::chrono::nanoseconds timeout) = 0;
  virtual void release() = 0;
  virtual bool hold_timed_out() = 0;  // once the device is past the hold: it stopped waiting on its own
  virtual void start() = 0;           // an event before the batch
  virtual void stop() = 0;            // an event after it
  virtual double elapsed_ns() = 0;    // between the two, once the device reached the second
};

struct DeviceTimes {
  outcome::Stats gpu, loop;
  std::string queue_not_held;  // outcome::Measurement::queue_not_held
};

// Samples both until each sampler is done (they share the time budget of `criteria`), alternating
// so that both see the same machine. `enqueue_ns`: the host's time to launch one call, which sizes
// the hold's timeout. `between_samples` is called after each pair (to stop, or show progress).
DeviceTimes time_device(DeviceClock& device, const std::function<void()>& call, const outcome::Iterations& criteria, double enqueue_ns,
                        const std::function<void(const Sampler& gpu, const Sampler& loop)>& between_samples);

}  // namespace expr::runner
