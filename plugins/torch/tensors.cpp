#include "expr_torch/tensors.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

#include <stdexcept>

namespace expr_torch {

std::vector<expr::Device> supported_devices() {
  if (EXPR_TORCH_HAS_CUDA) return {expr::Device::cpu, expr::Device::cuda};
  return {expr::Device::cpu};
}

at::Device device_of(const expr::Context& ctx) {
  if (ctx.device() == expr::Device::cuda) return {at::kCUDA, static_cast<c10::DeviceIndex>(ctx.device_index())};
  return {at::kCPU};
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names{"bf16", "fp16", "fp32", "fp64"};
  return names;
}

at::ScalarType dtype_of(const std::string& name) {
  if (name == "bf16") return at::kBFloat16;
  if (name == "fp16") return at::kHalf;
  if (name == "fp32") return at::kFloat;
  if (name == "fp64") return at::kDouble;
  throw std::invalid_argument("unknown dtype '" + name + "'");
}

double relative_error(const at::Tensor& out, const at::Tensor& ref) {
  const auto o = out.to(at::kDouble);
  const auto r = ref.to(at::kDouble);
  return ((o - r).norm() / r.norm()).item<double>();
}

double tolerance_for(at::ScalarType dtype) {
  // bf16 keeps 8 mantissa bits: a correct attention lands between 1e-3 and 1e-2; fp16 keeps 11.
  switch (dtype) {
    case at::kBFloat16: return 2e-2;
    case at::kHalf: return 5e-3;
    case at::kFloat: return 1e-4;
    default: return 1e-10;
  }
}

void note_versions(expr::Context& ctx) {
  ctx.note_environment("libtorch", TORCH_VERSION);
  if (ctx.device() != expr::Device::cuda) return;
  const auto& hooks = at::detail::getCUDAHooks();
  const auto dotted = [](long v, long major, long minor) {
    return std::to_string(v / major) + "." + std::to_string(v % major / minor) + (minor > 1 ? "." + std::to_string(v % minor) : "");
  };
  if (hooks.hasCuDNN()) ctx.note_environment("cudnn", dotted(hooks.versionCuDNN(), 10000, 100));  // 91002 -> 9.10.2
  const long cudart = hooks.versionCUDART();                                                      // 13000 -> 13.0
  ctx.note_environment("libtorch_cuda_runtime", std::to_string(cudart / 1000) + "." + std::to_string(cudart % 1000 / 10));
}

void synchronize(const expr::Context& ctx) {
  if (ctx.device() == expr::Device::cuda) at::detail::getCUDAHooks().deviceSynchronize(ctx.device_index());
}

}  // namespace expr_torch
