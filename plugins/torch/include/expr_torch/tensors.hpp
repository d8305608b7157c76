// Tensor helpers for LibTorch plugins: devices, dtypes, the error against a reference, versions.
#pragma once

#include <ATen/ATen.h>
#include <expr/plugin.hpp>

#include <string>
#include <vector>

namespace expr_torch {

// Devices this LibTorch build can run on.
std::vector<expr::Device> supported_devices();

at::Device device_of(const expr::Context& ctx);

// "bf16", "fp16", "fp32", "fp64".
const std::vector<std::string>& dtype_names();
at::ScalarType dtype_of(const std::string& name);

// ‖out − ref‖ / ‖ref‖, computed in float64. NaN when out holds a NaN.
double relative_error(const at::Tensor& out, const at::Tensor& ref);

// The relative error a correct result in this dtype stays under.
double tolerance_for(at::ScalarType dtype);

// LibTorch, and where it has them, its CUDA runtime and cuDNN versions, into the run's environment.
void note_versions(expr::Context& ctx);

// Waits for the device work this plugin queued (a no-op on the cpu).
void synchronize(const expr::Context& ctx);

}  // namespace expr_torch
