// Exports a trace as Chrome trace-event JSON in the PyTorch profiler's (Kineto's) dialect, which
// Perfetto, chrome://tracing, TensorBoard's profiler plugin and Holistic Trace Analysis (HTA) read:
// its categories (cpu_op, user_annotation, cuda_runtime, cuda_driver, kernel, gpu_memcpy,
// gpu_memset), the allocator's "[memory]" instants, ProfilerStep#N iterations, ac2g flows from each launch to its device work, its
// top-level keys (schemaVersion, deviceProperties, distributedInfo, trace_id, baseTimeNanoseconds)
// and its argument names with Kineto's meanings. expr's own figures go under names of its own.
// docs/chrome-trace.md maps every field to its meaning and its Kineto equivalent.
//
// Times are exact to the nanosecond. An event shorter than 1 µs is written as a begin/end pair
// ("B"/"E") rather than a complete event ("X"): Perfetto draws it the same, while HTA, which rounds
// complete events' ends down and starts up to whole µs and fails on the negative lengths that
// gives sub-µs events, and TensorBoard, which reads only complete events, leave it out. A launch
// and the device work it queued go together: when either is shorter than 1 µs both are pairs, as
// HTA fails on a launch whose work it cannot find. A complete event of 1 µs or more never rounds
// to a negative length.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "analysis/occupancy.hpp"
#include "trace/trace.hpp"

namespace expr::report {

// Shorter events, and the launches and device work paired with them, are begin/end pairs (see above).
inline constexpr trace::Ns shortest_complete_event_ns = 1000;

struct ChromeTraceInfo {
  std::string title;     // traceName
  std::string trace_id;  // trace_id: the run's id and the experiment, "RUN_ID/EXPERIMENT"
};

// `occupancies` is parallel to trace.kernels (analysis::kernel_occupancies): the writer writes
// figures, it does not compute them.
void render_chrome_trace(const trace::Trace& trace, const std::vector<std::optional<analysis::KernelOccupancy>>& occupancies,
                         const ChromeTraceInfo& info, fmt::memory_buffer& out);
void write_chrome_trace(const trace::Trace& trace, const std::vector<std::optional<analysis::KernelOccupancy>>& occupancies,
                        const ChromeTraceInfo& info, const std::filesystem::path& file);

}  // namespace expr::report
