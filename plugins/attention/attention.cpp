#include "attention.hpp"

#include <cmath>
#include <limits>

#include "expr_torch/tensors.hpp"

namespace attention {

std::vector<expr::ParamSpec> shape_params() {
  using expr::ParamType;
  return {
      {"batch", ParamType::integer, std::int64_t{8}, "batch size", {}},
      {"heads", ParamType::integer, std::int64_t{16}, "attention heads", {}},
      {"seq", ParamType::integer, std::int64_t{1024}, "sequence length", {}},
      {"head_dim", ParamType::integer, std::int64_t{64}, "dimension of one head", {}},
      {"dtype", ParamType::string, std::string("bf16"), "element type of q, k, v", expr_torch::dtype_names()},
  };
}

Shape shape_of(const expr::Params& p) {
  return {p.integer("batch"), p.integer("heads"), p.integer("seq"), p.integer("head_dim"), expr_torch::dtype_of(p.string("dtype"))};
}

Inputs make_inputs(const Shape& s, at::Device device) {
  at::manual_seed(0);
  const auto options = at::TensorOptions().dtype(s.dtype).device(device);
  const std::vector<std::int64_t> size{s.batch, s.heads, s.seq, s.head_dim};
  return {at::randn(size, options), at::randn(size, options), at::randn(size, options)};
}

at::Tensor reference(const Inputs& in, bool causal) {
  const auto q = in.q.to(at::kDouble), k = in.k.to(at::kDouble), v = in.v.to(at::kDouble);
  const auto seq = q.size(-2);
  auto scores = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (causal) scores.masked_fill_(at::ones({seq, seq}, q.options().dtype(at::kBool)).triu(1), -std::numeric_limits<double>::infinity());
  return at::matmul(at::softmax(scores, -1), v);
}

void check_against_reference(expr::Context& ctx, const at::Tensor& out, const Inputs& in, const Shape& shape, bool causal) {
  ctx.report_correctness("output vs float64 reference", expr_torch::relative_error(out, reference(in, causal)),
                         expr_torch::tolerance_for(shape.dtype));
}

expr::Work work(const Shape& s) {
  const double b = static_cast<double>(s.batch), h = static_cast<double>(s.heads), n = static_cast<double>(s.seq),
               d = static_cast<double>(s.head_dim);
  const double element = static_cast<double>(at::elementSize(s.dtype));
  return {4 * b * h * n * n * d, 4 * b * h * n * d * element};
}

}  // namespace attention
