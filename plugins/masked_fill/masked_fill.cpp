// Naive causal attention, as the series wrote it first: matmul(q, kᵀ), scale, mask the future with
// masked_fill, softmax, matmul with v. The out-of-place masked_fill clones the whole score tensor
// before filling it, a hidden copy the in-place masked_fill_ avoids.
#include <c10/core/GradMode.h>
#include <expr/plugin.hpp>

#include <cmath>
#include <limits>

#include "attention.hpp"
#include "expr_torch/memory_tracer.hpp"
#include "expr_torch/op_tracer.hpp"
#include "expr_torch/tensors.hpp"

namespace {

class MaskedFill final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    auto params = attention::shape_params();
    params.push_back({"inplace", expr::ParamType::boolean, false, "mask with masked_fill_ (in place) instead of masked_fill", {}});
    return {"masked_fill", "naive causal attention; the mask applied with masked_fill or in place with masked_fill_", params,
            expr_torch::supported_devices()};
  }

  std::vector<expr::Guess> guesses(const expr::Params& p) const override {
    if (p.boolean("inplace"))
      return {{"ops(\"^aten::clone$\") == 0", "masked_fill_ writes into the scores; nothing is cloned"},
              {"copies(kind=DtoD) == 0", "no clone, so no device-to-device copy"}};
    return {{"ops(\"^aten::clone$\") == 1", "out-of-place masked_fill clones the scores before filling them"},
            {"copies(kind=DtoD, op=\"^aten::masked_fill$\") == 1", "on the GPU that clone is one device-to-device Memcpy"},
            {fmt_bytes(score_bytes(attention::shape_of(p))), "the copy moves the whole [batch, heads, seq, seq] score tensor"}};
  }

  static double score_bytes(const attention::Shape& s) {
    return static_cast<double>(s.batch * s.heads * s.seq * s.seq) * static_cast<double>(at::elementSize(s.dtype));
  }
  static std::string fmt_bytes(double bytes) { return "copy_bytes(kind=DtoD) == " + std::to_string(static_cast<long long>(bytes)) + "B"; }

  std::optional<expr::Work> work(const expr::Params& p) const override { return attention::work(attention::shape_of(p)); }

  // Inputs and the mask only: the first forward, cuBLAS's first use with it, is the cold call.
  void setup(expr::Context& ctx, const expr::Params& p) override {
    expr_torch::trace_ops(ctx);
    expr_torch::trace_memory(ctx);
    shape_ = attention::shape_of(p);
    inplace_ = p.boolean("inplace");
    const auto device = expr_torch::device_of(ctx);
    inputs_ = attention::make_inputs(shape_, device);
    // The series builds the boolean mask once and reuses it.
    mask_ = at::ones({shape_.seq, shape_.seq}, at::TensorOptions().dtype(at::kBool).device(device)).triu(1);
    scale_ = 1.0 / std::sqrt(static_cast<double>(shape_.head_dim));
    expr_torch::note_versions(ctx);
  }

  void run(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    auto range = ctx.range("forward");
    out_ = forward();
  }

  // out_ still holds the first call's output.
  void verify(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    attention::check_against_reference(ctx, out_, inputs_, shape_, true);
  }

  void teardown(expr::Context&) override {
    inputs_ = {};
    mask_ = at::Tensor();
    out_ = at::Tensor();
  }

 private:
  at::Tensor forward() const {
    auto scores = at::matmul(inputs_.q, inputs_.k.transpose(-2, -1)) * scale_;
    const double minus_inf = -std::numeric_limits<double>::infinity();
    if (inplace_) scores.masked_fill_(mask_, minus_inf);
    else scores = scores.masked_fill(mask_, minus_inf);
    return at::matmul(at::softmax(scores, -1), inputs_.v);
  }

  attention::Shape shape_{};
  bool inplace_ = false;
  attention::Inputs inputs_;
  at::Tensor mask_, out_;
  double scale_ = 1;
};

}  // namespace

EXPR_PLUGIN(MaskedFill)
