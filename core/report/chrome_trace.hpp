// Exports a trace as Chrome trace-event JSON, which Perfetto and chrome://tracing open. Field names
// follow the PyTorch profiler's traces (categories, kernel args, ac2g flows, ProfilerStep#N), so
// tools written for those traces, such as Holistic Trace Analysis, can read these too.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "analysis/occupancy.hpp"
#include "trace/trace.hpp"

namespace expr::report {

// `occupancies` is parallel to trace.kernels (analysis::kernel_occupancies): the writer writes
// figures, it does not compute them.
void render_chrome_trace(const trace::Trace& trace, const std::vector<std::optional<analysis::Occupancy>>& occupancies,
                         const std::string& title, fmt::memory_buffer& out);
void write_chrome_trace(const trace::Trace& trace, const std::vector<std::optional<analysis::Occupancy>>& occupancies,
                        const std::string& title, const std::filesystem::path& file);

}  // namespace expr::report
