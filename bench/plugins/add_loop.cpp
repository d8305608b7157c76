// A launch-bound loop: `launches` in-place adds on a one-element tensor per run(), the workload on
// which tracing costs show most plainly (each launch is a few microseconds of host work).
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <expr/plugin.hpp>

#include "expr_torch/op_tracer.hpp"
#include "expr_torch/tensors.hpp"

namespace {

class AddLoop final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"add_loop",
            "x.add_(1) on a one-element tensor, `launches` times per run",
            {{"launches", expr::ParamType::integer, std::int64_t{10000}, "in-place adds per run", {}}},
            expr_torch::supported_devices()};
  }

  std::vector<expr::Guess> guesses(const expr::Params& p) const override {
    const auto n = std::to_string(p.integer("launches"));
    return {{"kernels == " + n, "one kernel per add"}, {"ops(\"^aten::add_$\") == " + n, "one op per add"}};
  }

  void setup(expr::Context& ctx, const expr::Params& p) override {
    expr_torch::trace_ops(ctx);
    launches_ = p.integer("launches");
    x_ = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(expr_torch::device_of(ctx)));
    expr_torch::note_versions(ctx);
  }

  void run(expr::Context&) override {
    c10::NoGradGuard no_grad;
    for (std::int64_t i = 0; i < launches_; ++i) x_.add_(1);
  }

  void teardown(expr::Context&) override { x_ = at::Tensor(); }

 private:
  std::int64_t launches_ = 0;
  at::Tensor x_;
};

}  // namespace

EXPR_PLUGIN(AddLoop)
