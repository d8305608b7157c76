// A LibTorch plugin for the check that setup did not run the measured work: run() multiplies two
// small matrices; with `work_in_setup` setup() does the same product once more, as plugins did
// when they checked correctness in setup.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <expr/plugin.hpp>

#include "expr_torch/op_tracer.hpp"
#include "expr_torch/tensors.hpp"

namespace {

class SetupRule final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"setup_rule",
            "matmul of two 64x64 matrices; optionally the same matmul in setup",
            {{"work_in_setup", expr::ParamType::boolean, false, "run the measured matmul in setup too", {}}},
            {expr::Device::cpu}};
  }

  void setup(expr::Context& ctx, const expr::Params& p) override {
    expr_torch::trace_ops(ctx);
    c10::NoGradGuard no_grad;
    a_ = at::randn({64, 64});
    b_ = at::randn({64, 64});
    if (p.boolean("work_in_setup")) out_ = at::matmul(a_, b_);
  }

  void run(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    auto range = ctx.range("product");
    out_ = at::matmul(a_, b_);
  }

 private:
  at::Tensor a_, b_, out_;
};

}  // namespace

EXPR_PLUGIN(SetupRule)
