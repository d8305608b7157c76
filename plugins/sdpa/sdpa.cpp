// scaled_dot_product_attention with its backend pinned (math, efficient, flash, cudnn) or left to
// PyTorch (auto, which reports its choice as the fact "backend").
#include <c10/core/GradMode.h>
#include <expr/plugin.hpp>
#include <torch/version.h>

#include <stdexcept>
#include <string>

#include "attention.hpp"
#include "expr_torch/memory_tracer.hpp"
#include "expr_torch/op_tracer.hpp"
#include "expr_torch/tensors.hpp"

namespace {

const std::vector<std::string> backends{"math", "efficient", "flash", "cudnn", "auto"};

#if TORCH_VERSION_MAJOR >= 2
constexpr bool has_sdpa = true;

// Which backends PyTorch may use: the global switches Python's sdpa_kernel() context sets.
void pin(const std::string& backend) {
  auto& g = at::globalContext();
  const bool all = backend == "auto";
  g.setSDPUseMath(all || backend == "math");
  g.setSDPUseMemEfficient(all || backend == "efficient");
  g.setSDPUseFlash(all || backend == "flash");
  g.setSDPUseCuDNN(all || backend == "cudnn");
}

std::string chosen_backend(const attention::Inputs& in, bool causal) {
  const auto choice = at::_fused_sdp_choice(in.q, in.k, in.v, {}, 0.0, causal, std::nullopt, false);
  switch (choice) {
    case 0: return "math";
    case 1: return "flash";
    case 2: return "efficient";
    case 3: return "cudnn";
    default: return "none (" + std::to_string(choice) + ")";
  }
}

// PyTorch explains why a backend cannot run in warnings, then fails with "No available kernel".
class WarningCollector final : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override { text += (text.empty() ? "" : " ") + warning.msg(); }
  std::string text;
};
#else
constexpr bool has_sdpa = false;
#endif

class Sdpa final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    auto params = attention::shape_params();
    params.push_back({"backend", expr::ParamType::string, std::string("auto"), "SDPA backend to pin, or auto to let PyTorch choose", backends});
    params.push_back({"causal", expr::ParamType::boolean, true, "causal masking (is_causal=True)", {}});
    std::vector<expr::Device> devices;
    if (has_sdpa && EXPR_TORCH_HAS_CUDA) devices.push_back(expr::Device::cuda);
    return {"sdpa", "scaled_dot_product_attention with a pinned backend (LibTorch " TORCH_VERSION ")", params, devices};
  }

  std::vector<expr::Guess> guesses(const expr::Params& p) const override {
    const auto& backend = p.string("backend");
    if (backend == "auto") return {};
    if (backend == "math") return {{"kernels > 1", "the math backend is ordinary ATen ops, one kernel or more each"}};
    return {{"kernels == 1", "a fused backend computes attention in one kernel"},
            {"fact(\"backend\") == \"" + backend + "\"", "pinning leaves PyTorch no other choice"}};
  }

  std::optional<expr::Work> work(const expr::Params& p) const override { return attention::work(attention::shape_of(p)); }

  // Inputs and the backend choice only: the first forward (for cuDNN, its plan for this shape) is
  // the cold call. Asking which backend would run checks that the pinned one can, without running it.
  void setup(expr::Context& ctx, const expr::Params& p) override {
#if TORCH_VERSION_MAJOR >= 2
    expr_torch::trace_ops(ctx);
    expr_torch::trace_memory(ctx);
    shape_ = attention::shape_of(p);
    causal_ = p.boolean("causal");
    const auto& backend = p.string("backend");
    inputs_ = attention::make_inputs(shape_, expr_torch::device_of(ctx));
    pin(backend);
    WarningCollector warnings;
    try {
      c10::WarningUtils::WarningHandlerGuard guard(&warnings);
      ctx.report_fact("backend", chosen_backend(inputs_, causal_));
    } catch (const c10::Error& e) {
      throw std::runtime_error("backend " + backend + " cannot run here: " + e.what_without_backtrace() +
                               (warnings.text.empty() ? "" : " PyTorch says: " + warnings.text));
    }
    expr_torch::note_versions(ctx);
#else
    (void)ctx, (void)p;
    throw std::runtime_error("scaled_dot_product_attention needs LibTorch 2.0 or later; this plugin was built against " TORCH_VERSION);
#endif
  }

  void run(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    auto range = ctx.range("forward");
    out_ = forward();
  }

  // out_ still holds the first call's output.
  void verify(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    attention::check_against_reference(ctx, out_, inputs_, shape_, causal_);
  }

  void teardown(expr::Context&) override {
    inputs_ = {};
    out_ = at::Tensor();
  }

 private:
  at::Tensor forward() const {
#if TORCH_VERSION_MAJOR >= 2
    return at::scaled_dot_product_attention(inputs_.q, inputs_.k, inputs_.v, {}, 0.0, causal_);
#else
    return {};
#endif
  }

  attention::Shape shape_{};
  bool causal_ = true;
  attention::Inputs inputs_;
  at::Tensor out_;
};

}  // namespace

EXPR_PLUGIN(Sdpa)
