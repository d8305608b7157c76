#include "attention.hpp"

#include <algorithm>
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

namespace {

// The float64 scores of one slice are the reference's largest temporary: a slice holds at most
// this many of them (1 GiB), whatever the shape, so the reference fits beside any variant that
// fits itself (the whole [8, 16, 8192, 8192] scores would be 64 GiB).
constexpr std::int64_t reference_slice_scores = std::int64_t{1} << 27;

// softmax(q kᵀ / √d [+ causal mask]) v in float64 for query rows [first, first + rows) of every
// (batch, head) pair in [bh, bh + pairs), q, k, v flattened to [batch·heads, seq, head_dim].
at::Tensor reference_slice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::int64_t bh, std::int64_t pairs,
                           std::int64_t first, std::int64_t rows, bool causal) {
  const auto qs = q.slice(0, bh, bh + pairs).slice(1, first, first + rows).to(at::kDouble);
  const auto ks = k.slice(0, bh, bh + pairs).to(at::kDouble), vs = v.slice(0, bh, bh + pairs).to(at::kDouble);
  auto scores = at::matmul(qs, ks.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (causal) {
    // Query row first + i sees keys up to first + i.
    const auto row = at::arange(first, first + rows, q.options().dtype(at::kLong)).unsqueeze(1);
    const auto key = at::arange(k.size(1), q.options().dtype(at::kLong)).unsqueeze(0);
    scores.masked_fill_(key > row, -std::numeric_limits<double>::infinity());
  }
  return at::matmul(at::softmax(scores, -1), vs);
}

}  // namespace

double relative_error_to_reference(const at::Tensor& out, const Inputs& in, bool causal) {
  const auto seq = in.q.size(-2), dim = in.q.size(-1);
  const auto flat = [&](const at::Tensor& t) { return t.reshape({-1, seq, dim}); };
  const auto q = flat(in.q), k = flat(in.k), v = flat(in.v), o = flat(out);
  const auto bh_total = q.size(0);
  // Whole (batch, head) pairs while they fit in a slice; rows of one pair when even one does not.
  const auto pairs = std::clamp<std::int64_t>(reference_slice_scores / (seq * seq), 1, bh_total);
  const auto rows = std::clamp<std::int64_t>(reference_slice_scores / seq, 1, seq);
  double error = 0, norm = 0;
  for (std::int64_t bh = 0; bh < bh_total; bh += pairs) {
    const auto n = std::min(pairs, bh_total - bh);
    for (std::int64_t first = 0; first < seq; first += rows) {
      const auto r = std::min(rows, seq - first);
      const auto ref = reference_slice(q, k, v, bh, n, first, r, causal);
      const auto got = o.slice(0, bh, bh + n).slice(1, first, first + r).to(at::kDouble);
      error += (got - ref).pow(2).sum().item<double>();
      norm += ref.pow(2).sum().item<double>();
    }
  }
  return std::sqrt(error) / std::sqrt(norm);
}

void check_against_reference(expr::Context& ctx, const at::Tensor& out, const Inputs& in, const Shape& shape, bool causal) {
  ctx.report_correctness("output vs float64 reference", relative_error_to_reference(out, in, causal), expr_torch::tolerance_for(shape.dtype));
}

expr::Work work(const Shape& s) {
  const double b = static_cast<double>(s.batch), h = static_cast<double>(s.heads), n = static_cast<double>(s.seq),
               d = static_cast<double>(s.head_dim);
  const double element = static_cast<double>(at::elementSize(s.dtype));
  return {4 * b * h * n * n * d, 4 * b * h * n * d * element};
}

}  // namespace attention
