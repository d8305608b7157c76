// Host ranges and the framework allocator's events into a Trace: see recorder.hpp.
#include "trace/recorder.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "trace/clock.hpp"

namespace expr::trace {

std::uint32_t current_thread() {
  thread_local const auto tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return tid;
}

Ns unix_offset() {
  // The realtime clock read between two reads of ours: the offset is known to within their gap.
  const Ns before = now();
  timespec real{};
  clock_gettime(CLOCK_REALTIME, &real);
  const Ns after = now();
  return static_cast<Ns>(real.tv_sec) * 1'000'000'000 + real.tv_nsec - (before + (after - before) / 2);
}

namespace {
// Open ranges of this thread, innermost last: the parent of the next range.
thread_local std::vector<std::int32_t> open_ranges;
}  // namespace

void HostRecorder::begin_iteration() {
  const auto handle = [&] {
    std::lock_guard lock(mutex_);
    iteration_ = static_cast<std::int32_t>(trace_.iterations.size());
    trace_.iterations.push_back({});
    return iteration_;
  }();
  recording_.store(true, std::memory_order_relaxed);
  const auto range = begin("ProfilerStep#" + std::to_string(handle), RangeKind::iteration);
  std::lock_guard lock(mutex_);
  auto& it = trace_.iterations[static_cast<std::size_t>(handle)];
  it.range = static_cast<std::int32_t>(range);
  it.start = trace_.ranges[static_cast<std::size_t>(range)].start;
}

void HostRecorder::end_iteration() {
  const auto range = trace_.iterations[static_cast<std::size_t>(iteration_)].range;
  end(range);
  recording_.store(false, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  trace_.iterations[static_cast<std::size_t>(iteration_)].end = trace_.ranges[static_cast<std::size_t>(range)].end;
  iteration_ = none;
}

std::int64_t HostRecorder::begin(std::string_view name, RangeKind kind) {
  if (!recording()) return -1;
  const Ns start = now();
  std::int32_t index;
  {
    std::lock_guard lock(mutex_);
    index = static_cast<std::int32_t>(trace_.ranges.size());
    trace_.ranges.push_back({trace_.strings.intern(name), kind, current_thread(), start, start,
                             open_ranges.empty() ? none : open_ranges.back(), iteration_});
  }
  open_ranges.push_back(index);
  return index;
}

void HostRecorder::end(std::int64_t handle) {
  if (handle < 0) return;
  const Ns end = now();
  if (!open_ranges.empty() && open_ranges.back() == handle) open_ranges.pop_back();
  std::lock_guard lock(mutex_);
  trace_.ranges[static_cast<std::size_t>(handle)].end = end;
}

void HostRecorder::allocation(std::uint64_t address, std::int64_t bytes, std::int64_t total_allocated, std::int64_t total_reserved,
                              std::int32_t device) {
  if (!recording()) return;
  const Ns time = now();
  std::lock_guard lock(mutex_);
  trace_.memory.push_back({MemorySource::allocator, device, current_thread(), time, bytes, address, total_allocated, total_reserved, 0,
                           iteration_});
}

}  // namespace expr::trace
