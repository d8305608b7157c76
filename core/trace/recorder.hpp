// Records host ranges (iterations, plugin ranges, framework ops) and the framework allocator's
// events into a Trace while tracing is on.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string_view>

#include "trace/trace.hpp"

namespace expr::trace {

class HostRecorder {
 public:
  explicit HostRecorder(Trace& trace) : trace_(trace) {}

  bool recording() const { return recording_.load(std::memory_order_relaxed); }

  // Between these two, run() is one traced iteration.
  void begin_iteration();
  void end_iteration();

  // Returns a handle for end(), or a negative one when not recording.
  std::int64_t begin(std::string_view name, RangeKind kind);
  void end(std::int64_t handle);

  // One allocation (bytes > 0) or release by the framework's allocator (MemorySource::allocator),
  // stamped with the time, the thread and the open iteration; nothing when not recording.
  void allocation(std::uint64_t address, std::int64_t bytes, std::int64_t total_allocated, std::int64_t total_reserved,
                  std::int32_t device);

 private:
  Trace& trace_;
  std::atomic<bool> recording_{false};
  std::int32_t iteration_ = none;
  std::mutex mutex_;  // ops may be recorded from several threads
};

}  // namespace expr::trace
