// The memory figures of a trace: what each traced iteration allocated and how high its memory rose,
// as the framework's allocator saw it (the plugin's reports) or as the CUDA driver did (CUPTI), and
// the metrics that read them (peak_memory, allocated_bytes, allocations, driver_allocations,
// driver_allocated_bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/metrics.hpp"
#include "trace/trace.hpp"

namespace expr::analysis {

// One traced iteration's memory, from one source, on the device side or the host side.
struct IterationMemory {
  // The highest the sum of its allocations and releases rose above where it began: the bytes the
  // iteration needed at once beyond what was held before it.
  std::int64_t peak = 0;
  std::int64_t allocated = 0;  // bytes of its allocations
  std::int64_t allocations = 0;
  // At the peak, what the allocator said it held and had reserved; -1 where it did not say.
  std::int64_t total_allocated_at_peak = -1;
  std::int64_t total_reserved_at_peak = -1;
};

// Per traced iteration, in order: the events of `source` on a CUDA device (`device_side`) or in
// host memory. An iteration with no event needed nothing.
std::vector<IterationMemory> memory_per_iteration(const trace::Trace& t, trace::MemorySource source, bool device_side);

// The catalog's memory metrics (metrics.cpp appends them).
std::vector<MetricSpec> memory_metrics();

}  // namespace expr::analysis
