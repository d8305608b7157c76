// Records LibTorch's framework ops (aten::matmul, aten::copy_, ...) as host ranges of the trace,
// through a RecordFunction observer that is installed only while iterations are traced.
#pragma once

#include <expr/plugin.hpp>

namespace expr_torch {

// Call once in setup(); the runner switches the observer on and off around traced iterations.
void trace_ops(expr::Context& ctx);

}  // namespace expr_torch
