// Causal attention as the series measured it: q, k, v of shape [batch, heads, seq, head_dim].
#pragma once

#include <ATen/ATen.h>
#include <expr/plugin.hpp>

#include <vector>

namespace attention {

struct Shape {
  std::int64_t batch, heads, seq, head_dim;
  at::ScalarType dtype;
};

// batch, heads, seq, head_dim and dtype, with the series' defaults (8, 16, 1024, 64, bf16).
std::vector<expr::ParamSpec> shape_params();
Shape shape_of(const expr::Params& params);

struct Inputs {
  at::Tensor q, k, v;
};

// Fresh normal inputs from a fixed seed; never zeros, which hide wrong indexing.
Inputs make_inputs(const Shape& shape, at::Device device);

// ‖out − ref‖/‖ref‖ against softmax(q kᵀ / √d [+ causal mask]) v in float64, on the inputs'
// device, computed in slices of at most 1 GiB of float64 scores so that the reference fits beside
// any variant that fits (the sweep's naive point at seq 8192 would need 64 GiB at once). On a GPU
// it runs cuBLAS's double GEMMs, and cuBLAS's first use (handle and workspace) is part of what a
// variant's cold first call pays, so it is computed only after that call, in verify()
// (expr/plugin.hpp: setup must not run the measured work).
// With `keep`, the reference is also copied into it, on the host, [batch·heads, seq, head_dim].
double relative_error_to_reference(const at::Tensor& out, const Inputs& in, bool causal, at::Tensor* keep = nullptr);

// For verify(): reports that relative error of the first call's output against the dtype's
// tolerance; the runner fails a variant above it. The reference is kept in the run's shared
// directory (expr::Context::shared_directory, up to 256 MiB of it), where the next experiment with
// the same inputs (same shape, dtype, mask and device kind; their first values checked) reads it
// and compares on the host instead of computing it again: in series 3, six of seven.
void check_against_reference(expr::Context& ctx, const at::Tensor& out, const Inputs& in, const Shape& shape, bool causal);

// Dense count: 4·b·h·s²·d FLOPs for the two products (causal kernels skip about half of them),
// and the fewest bytes: q, k, v read once and the output written once.
expr::Work work(const Shape& shape);

}  // namespace attention
