// Records host ranges (iterations, plugin ranges, framework ops) into a Trace while tracing is on.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "trace/trace.hpp"

namespace expr::trace {

// Told when host ranges open and close, so a device collector can tag the API calls made inside.
class RangeListener {
 public:
  virtual ~RangeListener() = default;
  virtual void iteration_begun(std::uint64_t tag) = 0;
  virtual void iteration_ended() = 0;
  virtual void range_begun(std::uint64_t tag) = 0;
  virtual void range_ended() = 0;
};

class HostRecorder {
 public:
  explicit HostRecorder(Trace& trace) : trace_(trace) {}

  void set_listener(RangeListener* listener) { listener_ = listener; }
  bool recording() const { return recording_.load(std::memory_order_relaxed); }

  // Between these two, run() is one traced iteration.
  void begin_iteration();
  void end_iteration();

  // Returns a handle for end(), or a negative one when not recording.
  std::int64_t begin(std::string_view name, RangeKind kind);
  void end(std::int64_t handle);

 private:
  Trace& trace_;
  RangeListener* listener_ = nullptr;
  std::atomic<bool> recording_{false};
  std::int32_t iteration_ = none;
  std::mutex mutex_;  // ops may be recorded from several threads
};

}  // namespace expr::trace
