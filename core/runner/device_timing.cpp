// gpu_time and loop_time: see device_timing.hpp.
#include "runner/device_timing.hpp"

#include <algorithm>

#include "trace/clock.hpp"

namespace expr::runner {

namespace {

// Calls for a batch of about 10 ms of device time: long enough to hide the synchronisation around
// it, short enough to stop on time.
std::size_t batch_for(double per_call_ns, std::size_t cap) {
  return std::clamp<std::size_t>(static_cast<std::size_t>(10e6 / std::max(per_call_ns, 1000.0)), 1, cap);
}

double seconds_since(trace::Ns start) { return static_cast<double>(trace::now() - start) * 1e-9; }

// One batch of calls between two events; the device's time per call. `enqueued` runs once the
// host has launched the whole batch, before waiting for the device.
double time_batch(DeviceClock& device, const std::function<void()>& call, std::size_t batch, const std::function<void()>& enqueued = {}) {
  device.start();
  for (std::size_t i = 0; i < batch; ++i) call();
  device.stop();
  if (enqueued) enqueued();
  return device.elapsed_ns() / static_cast<double>(batch);
}

}  // namespace

DeviceTimes time_device(DeviceClock& device, const std::function<void()>& call, const outcome::Iterations& criteria, double enqueue_ns,
                        const std::function<void(const Sampler&, const Sampler&)>& between_samples) {
  Sampler held(criteria), loop(criteria);
  DeviceTimes out;
  std::size_t held_batch = 2, loop_batch = 2, held_calls = 0, loop_calls = 0;
  // The most calls one held batch may have: halved whenever the hold ends before the host has
  // enqueued the batch, which is what a full launch queue does (the host blocks in a launch).
  std::size_t held_cap = 4096;
  enqueue_ns = std::max(enqueue_ns, 1000.0);
  const auto start = trace::now();
  bool held_done = false, loop_done = false;
  while (!held_done || !loop_done) {
    if (!held_done) {
      device.synchronize();
      // Time to enqueue the batch with a wide margin: a hold that ends early costs a sample, one
      // that waits for a host which waits for the device costs the timeout.
      device.hold(std::chrono::nanoseconds(static_cast<std::int64_t>(50e6 + 4 * enqueue_ns * static_cast<double>(held_batch))));
      const double per_call = time_batch(device, call, held_batch, [&] { device.release(); });
      if (!device.hold_timed_out()) {
        held.add(per_call);
        held_calls += held_batch;
        held_batch = batch_for(per_call, held_cap);
      } else if (held_batch > 1) {
        held_cap = std::max<std::size_t>(held_batch / 2, 1);
        held_batch = 1;  // one call tells a full queue from a call that waits for the device itself
      } else {
        out.queue_not_held =
            "run() waits for the device (it synchronizes, or copies a result to the host), so its calls cannot be enqueued behind a held "
            "queue: gpu_time is loop_time, the host's launch gaps included";
        held_done = true;
      }
      held_done = held_done || held.done(seconds_since(start));
    }
    if (!loop_done) {
      device.synchronize();
      call();  // the device already has work when the first event is reached: the host's launch latency stays out
      const double per_call = time_batch(device, call, loop_batch);
      loop.add(per_call);
      loop_calls += loop_batch;
      loop_batch = batch_for(per_call, 10000);
      loop_done = loop.done(seconds_since(start));
    }
    between_samples(held, loop);
  }
  out.loop = loop.stats(seconds_since(start));
  out.loop.iterations = loop_calls;
  if (out.queue_not_held.empty()) {
    out.gpu = held.stats(seconds_since(start));
    out.gpu.iterations = held_calls;
  } else {
    out.gpu = out.loop;
  }
  return out;
}

}  // namespace expr::runner
