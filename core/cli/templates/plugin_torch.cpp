// @NAME@: an expr plugin on LibTorch. One Linear layer, y = x W^T + b, on the CPU or a GPU, a
// starting point: replace the work, keep the hooks. How each hook is used: expr's
// docs/writing-plugins.md.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <expr/plugin.hpp>
#include <expr_torch/memory_tracer.hpp>
#include <expr_torch/op_tracer.hpp>
#include <expr_torch/tensors.hpp>

#include <cmath>
#include <cstdint>

namespace {

class @CLASS@ final : public expr::Plugin {
 public:
  // In expr's parent process (`expr list`, `validate`, `run`): the name, parameters and devices.
  expr::Description describe() const override {
    return {"@NAME@",
            "one Linear layer: y = x W^T + b",
            {{"batch", expr::ParamType::integer, std::int64_t{512}, "rows of x", {}},
             {"in", expr::ParamType::integer, std::int64_t{1024}, "input features", {}},
             {"out", expr::ParamType::integer, std::int64_t{1024}, "output features", {}},
             {"bias", expr::ParamType::boolean, true, "add a bias", {}},
             {"dtype", expr::ParamType::string, std::string("fp32"), "element type", expr_torch::dtype_names()}},
            expr_torch::supported_devices()};
  }

  // Inputs only: setup must not run the measured work, or the cold first call would be warm.
  // trace_ops first, so expr sees it if setup dispatches the ops run() dispatches; trace_memory
  // for peak_memory and the allocations.
  void setup(expr::Context& ctx, const expr::Params& p) override {
    expr_torch::trace_ops(ctx);
    expr_torch::trace_memory(ctx);
    c10::NoGradGuard no_grad;
    dtype_ = expr_torch::dtype_of(p.string("dtype"));
    const auto options = at::TensorOptions().dtype(dtype_).device(expr_torch::device_of(ctx));
    const auto in = p.integer("in"), out = p.integer("out");
    at::manual_seed(0);
    x_ = at::randn({p.integer("batch"), in}, options);
    weight_ = at::randn({out, in}, options) / std::sqrt(static_cast<double>(in));
    if (p.boolean("bias")) bias_ = at::randn({out}, options);
    expr_torch::note_versions(ctx);
  }

  // The measured region, called many times: the cold first call, warm-up, timing, tracing. It
  // queues the device's work and returns; expr synchronises where it measures.
  void run(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    auto range = ctx.range("linear");
    y_ = at::linear(x_, weight_, bias_);
  }

  // Once, right after the cold first call: that call's output against a float64 reference.
  void verify(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    const auto bias = bias_.defined() ? bias_.to(at::kDouble) : at::Tensor();
    const auto reference = at::linear(x_.to(at::kDouble), weight_.to(at::kDouble), bias);
    ctx.report_correctness("y vs a float64 reference", expr_torch::relative_error(y_, reference), expr_torch::tolerance_for(dtype_));
  }

  // In the parent: what the trace should show, judged after the run like the series' guesses.
  std::vector<expr::Guess> guesses(const expr::Params& p) const override {
    if (p.boolean("bias")) return {{"ops(\"^aten::addmm$\") == 1", "with a bias, linear on a matrix is one addmm"}};
    return {{"ops(\"^aten::addmm$\") == 0", "without a bias there is nothing to add"}};
  }

  // For tflops and gbps: a multiply and an add per weight and row; x, W (and b) read, y written.
  std::optional<expr::Work> work(const expr::Params& p) const override {
    const auto batch = static_cast<double>(p.integer("batch")), in = static_cast<double>(p.integer("in")),
               out = static_cast<double>(p.integer("out"));
    const auto element = static_cast<double>(at::elementSize(expr_torch::dtype_of(p.string("dtype"))));
    return expr::Work{2 * batch * in * out, element * (batch * in + out * in + batch * out + (p.boolean("bias") ? out : 0))};
  }

 private:
  at::ScalarType dtype_ = at::kFloat;
  at::Tensor x_, weight_, bias_, y_;
};

}  // namespace

EXPR_PLUGIN(@CLASS@)
