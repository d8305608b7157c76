// Records LibTorch's allocations and releases (the CUDA caching allocator's, and the CPU
// allocator's) as the trace's memory events, for the memory figures: peak_memory, allocated_bytes,
// allocations (docs/expectations.md). Through the hook LibTorch's own profiler uses for its memory
// view (c10's memory reporting), switched on only while iterations are traced: the timed calls
// pay nothing for it.
#pragma once

#include <expr/plugin.hpp>

namespace expr_torch {

// Call in setup(); the runner switches the recording on and off around traced iterations.
void trace_memory(expr::Context& ctx);

}  // namespace expr_torch
