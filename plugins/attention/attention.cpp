// The attention plugins' shared parts: the series' shapes, seeded inputs, the float64 reference
// (kept in the run's shared directory for the experiments with the same inputs) and the work model.
#include "attention.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

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

// ‖out − reference‖ / ‖reference‖, summed over the parts the reference is computed or read in.
class RelativeError {
 public:
  // `got`: a part of the output, on the reference's device; `ref`: the same part of the reference.
  void add(const at::Tensor& got, const at::Tensor& ref) {
    error_ += (got.to(at::kDouble) - ref).pow(2).sum().item<double>();
    norm_ += ref.pow(2).sum().item<double>();
  }
  double value() const { return std::sqrt(error_) / std::sqrt(norm_); }

 private:
  double error_ = 0, norm_ = 0;
};

}  // namespace

double relative_error_to_reference(const at::Tensor& out, const Inputs& in, bool causal, at::Tensor* keep) {
  const auto seq = in.q.size(-2), dim = in.q.size(-1);
  const auto flat = [&](const at::Tensor& t) { return t.reshape({-1, seq, dim}); };
  const auto q = flat(in.q), k = flat(in.k), v = flat(in.v), o = flat(out);
  const auto bh_total = q.size(0);
  // Whole (batch, head) pairs while they fit in a slice; rows of one pair when even one does not.
  const auto pairs = std::clamp<std::int64_t>(reference_slice_scores / (seq * seq), 1, bh_total);
  const auto rows = std::clamp<std::int64_t>(reference_slice_scores / seq, 1, seq);
  if (keep) *keep = at::empty({bh_total, seq, dim}, at::TensorOptions().dtype(at::kDouble));
  RelativeError error;
  for (std::int64_t bh = 0; bh < bh_total; bh += pairs) {
    const auto n = std::min(pairs, bh_total - bh);
    for (std::int64_t first = 0; first < seq; first += rows) {
      const auto r = std::min(rows, seq - first);
      const auto ref = reference_slice(q, k, v, bh, n, first, r, causal);
      error.add(o.slice(0, bh, bh + n).slice(1, first, first + r), ref);
      if (keep) keep->slice(0, bh, bh + n).slice(1, first, first + r).copy_(ref);
    }
  }
  return error.value();
}

namespace {

// A reference kept in the run's shared directory: a header naming the inputs it belongs to, then
// its float64 values, [batch·heads, seq, head_dim] in order.
struct ReferenceHeader {
  char magic[8] = {'e', 'x', 'p', 'r', 'r', 'e', 'f', '1'};
  std::int64_t size[3] = {0, 0, 0};
  std::int64_t causal = 0;
  // The first values of q, k and v: inputs made otherwise (another seed, another generator) differ.
  double probe[3][16] = {};
};

// References up to this size are shared (a sweep's naive seq 8192 point would write 512 MiB).
constexpr std::int64_t shared_reference_bytes = std::int64_t{256} << 20;

ReferenceHeader header_for(const Inputs& in, bool causal) {
  ReferenceHeader h;
  h.size[0] = in.q.numel() / (in.q.size(-2) * in.q.size(-1));
  h.size[1] = in.q.size(-2);
  h.size[2] = in.q.size(-1);
  h.causal = causal ? 1 : 0;
  const at::Tensor* tensors[3] = {&in.q, &in.k, &in.v};
  for (int t = 0; t < 3; ++t) {
    const auto first = tensors[t]->reshape({-1}).slice(0, 0, 16).to(at::kCPU).to(at::kDouble).contiguous();
    std::copy(first.data_ptr<double>(), first.data_ptr<double>() + first.numel(), h.probe[t]);
  }
  return h;
}

bool same_inputs(const ReferenceHeader& a, const ReferenceHeader& b) {
  return std::memcmp(a.magic, b.magic, sizeof a.magic) == 0 && std::equal(a.size, a.size + 3, b.size) && a.causal == b.causal &&
         std::memcmp(a.probe, b.probe, sizeof a.probe) == 0;
}

// Where experiments of this run with these inputs keep their reference; none when the run shares
// nothing or the reference is too large to be worth writing.
std::optional<std::filesystem::path> shared_reference(const expr::Context& ctx, const Shape& shape, const Inputs& in, bool causal) {
  const auto dir = ctx.shared_directory();
  if (dir.empty() || in.q.numel() * std::int64_t{8} > shared_reference_bytes) return std::nullopt;
  std::ostringstream name;
  name << "attention-reference-" << shape.batch << 'x' << shape.heads << 'x' << shape.seq << 'x' << shape.head_dim << '-'
       << c10::toString(shape.dtype) << (causal ? "-causal-" : "-full-") << (in.q.is_cuda() ? "cuda" : "cpu") << ".f64";
  return std::filesystem::path(dir) / name.str();
}

// ‖out − reference‖ / ‖reference‖ against the reference kept in `file`, read a block at a time: one
// pass on the host, with no float64 copy of the output or the reference in memory (at series 3's
// shape each is 64 MiB, and RelativeError's tensor expressions would make four). None when the
// file is not of these inputs or is cut short.
std::optional<double> relative_error_to_kept(const std::filesystem::path& file, const ReferenceHeader& expected, const at::Tensor& out) {
  std::ifstream in(file, std::ios::binary);
  ReferenceHeader found;
  if (!in.read(reinterpret_cast<char*>(&found), sizeof found) || !same_inputs(found, expected)) return std::nullopt;
  // bf16 and fp16 are exact in float; a float64 output stays float64.
  const auto got = out.reshape({-1}).to(at::kCPU, out.scalar_type() == at::kDouble ? at::kDouble : at::kFloat).contiguous();
  if (got.numel() != found.size[0] * found.size[1] * found.size[2]) return std::nullopt;
  const auto sums = [&](const auto* values) -> std::optional<double> {
    std::vector<double> block(std::size_t{1} << 16);
    double error = 0, norm = 0;
    for (std::int64_t at = 0; at < got.numel(); at += static_cast<std::int64_t>(block.size())) {
      const auto n = std::min<std::int64_t>(static_cast<std::int64_t>(block.size()), got.numel() - at);
      if (!in.read(reinterpret_cast<char*>(block.data()), static_cast<std::streamsize>(n * sizeof(double)))) return std::nullopt;
      for (std::int64_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(values[at + i]) - block[i];
        error += d * d;
        norm += block[i] * block[i];
      }
    }
    return std::sqrt(error) / std::sqrt(norm);
  };
  return got.scalar_type() == at::kDouble ? sums(got.data_ptr<double>()) : sums(got.data_ptr<float>());
}

// Written under a name of this process and renamed into place, so a reader never meets half of it.
void write_reference(const std::filesystem::path& file, const ReferenceHeader& header, const at::Tensor& ref) {
  const auto part = file.string() + ".part-" + std::to_string(::getpid());
  {
    std::ofstream out(part, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&header), sizeof header);
    out.write(reinterpret_cast<const char*>(ref.data_ptr<double>()), static_cast<std::streamsize>(ref.numel() * sizeof(double)));
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(part, ec);
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(part, file, ec);
}

}  // namespace

void check_against_reference(expr::Context& ctx, const at::Tensor& out, const Inputs& in, const Shape& shape, bool causal) {
  const auto tolerance = expr_torch::tolerance_for(shape.dtype);
  const auto file = shared_reference(ctx, shape, in, causal);
  const auto header = file ? header_for(in, causal) : ReferenceHeader{};
  if (file)
    // On the host: the device would load a dozen float64 kernels for this, in every worker.
    if (const auto error = relative_error_to_kept(*file, header, out)) {
      ctx.info("float64 reference read from the run's shared directory, where an experiment with the same inputs left it");
      ctx.report_correctness("output vs float64 reference", *error, tolerance);
      return;
    }
  at::Tensor kept;
  const double error = relative_error_to_reference(out, in, causal, file ? &kept : nullptr);
  if (file) write_reference(*file, header, kept);
  ctx.report_correctness("output vs float64 reference", error, tolerance);
}

expr::Work work(const Shape& s) {
  const double b = static_cast<double>(s.batch), h = static_cast<double>(s.heads), n = static_cast<double>(s.seq),
               d = static_cast<double>(s.head_dim);
  const double element = static_cast<double>(at::elementSize(s.dtype));
  return {4 * b * h * n * n * d, 4 * b * h * n * d * element};
}

}  // namespace attention
