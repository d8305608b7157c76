// The control for expr's host_time: the same LibTorch call timed the same way, in a plain process
// with nothing of expr in it. Inputs as the attention plugins make them (attention::make_inputs),
// one cold call, optionally the float64 reference check that the plugins' verify() runs, a
// warm-up, then `--calls` calls each timed on the host with the device synchronized before it, as
// expr's timing loop does; prints the median in ns. Run it as several fresh processes: the spread
// between processes is what expr's host_time is compared against (scripts/on-gpu, stage host).
//
//   expr_bench_host_control --variant naive|naive_inplace|math [--reference] [--fork] [--calls N]
//
// --fork does the work in a child forked after LibTorch and its CUDA libraries are loaded and before
// CUDA is initialised, as expr's workers are made.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/GradMode.h>
#include <cuda_runtime.h>
#include <torch/version.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention.hpp"

namespace {

struct Options {
  std::string variant = "math";
  bool reference = false;
  bool fork = false;
  int calls = 400, warmup = 20;
};

at::Tensor forward(const std::string& variant, const attention::Inputs& in, const at::Tensor& mask) {
  if (variant == "math") {
#if TORCH_VERSION_MAJOR >= 2
    return at::scaled_dot_product_attention(in.q, in.k, in.v, {}, 0.0, true);
#else
    throw std::runtime_error("the math variant needs LibTorch 2.0 or later (scaled_dot_product_attention); this is " TORCH_VERSION);
#endif
  }
  auto scores = at::matmul(in.q, in.k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(in.q.size(-1))));
  if (variant == "naive_inplace") scores.masked_fill_(mask, -std::numeric_limits<float>::infinity());
  else scores = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
  return at::matmul(at::softmax(scores, -1), in.v);
}

double measure(const Options& o) {
  c10::NoGradGuard no_grad;
#if TORCH_VERSION_MAJOR >= 2
  auto& g = at::globalContext();  // math pinned, as the sdpa plugin pins it
  g.setSDPUseFlash(false);
  g.setSDPUseMemEfficient(false);
  g.setSDPUseCuDNN(false);
  g.setSDPUseMath(true);
#endif
  const attention::Shape shape{8, 16, 1024, 64, at::kBFloat16};
  const auto in = attention::make_inputs(shape, at::kCUDA);
  const auto mask = at::ones({shape.seq, shape.seq}, at::TensorOptions().dtype(at::kBool).device(at::kCUDA)).triu(1);
  const auto sync = [] { cudaDeviceSynchronize(); };  // as expr's cuda::synchronize()
  auto out = forward(o.variant, in, mask);  // the cold call
  sync();
  if (o.reference) std::printf("# relative error %.3g\n", attention::relative_error_to_reference(out, in, true));
  for (int i = 0; i < o.warmup; ++i) out = forward(o.variant, in, mask);
  std::vector<double> ns;
  for (int i = 0; i < o.calls; ++i) {
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    out = forward(o.variant, in, mask);  // the previous output stays alive meanwhile, as in the plugins
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  sync();
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 2), ns.end());
  return ns[ns.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--variant" && i + 1 < argc) o.variant = argv[++i];
    else if (a == "--reference") o.reference = true;
    else if (a == "--fork") o.fork = true;
    else if (a == "--calls" && i + 1 < argc) o.calls = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s --variant naive|naive_inplace|math [--reference] [--fork] [--calls N]\n", argv[0]);
      return 2;
    }
  }
  if (o.variant != "naive" && o.variant != "naive_inplace" && o.variant != "math") {
    std::fprintf(stderr, "--variant must be naive, naive_inplace or math, not '%s'\n", o.variant.c_str());
    return 2;
  }
  if (!o.fork) {
    std::printf("%s host_time_ns %.0f\n", o.variant.c_str(), measure(o));
    return 0;
  }
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child == 0) {
    std::printf("%s host_time_ns %.0f (forked)\n", o.variant.c_str(), measure(o));
    std::fflush(stdout);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
