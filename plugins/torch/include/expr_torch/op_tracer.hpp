// Records LibTorch's framework ops (aten::matmul, aten::copy_, ...) as host ranges of the trace,
// through a RecordFunction observer that is installed only while iterations are traced. Until
// setup() returns it also watches which ops setup dispatches, for the runner's check that setup
// did not run the measured work (expr/plugin.hpp).
#pragma once

#include <expr/plugin.hpp>

namespace expr_torch {

// Call first thing in setup(), so the watch sees all of it; the runner ends the watch as setup()
// returns and switches the observer on and off around traced iterations.
void trace_ops(expr::Context& ctx);

}  // namespace expr_torch
