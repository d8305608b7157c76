// @NAME@: an expr plugin with its own CUDA kernel. z = a*x + y over n floats (saxpy), a starting
// point: replace the kernel, keep the hooks. How each hook is used: expr's docs/writing-plugins.md.
#include <cuda_runtime.h>
#include <expr/plugin.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

__global__ void saxpy(std::size_t n, float a, const float* x, const float* y, float* z) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    z[i] = a * x[i] + y[i];
}

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("@NAME@: ") + what + ": " + cudaGetErrorString(status));
}

class @CLASS@ final : public expr::Plugin {
 public:
  // In expr's parent process (`expr list`, `validate`, `run`): no CUDA call here.
  expr::Description describe() const override {
    return {"@NAME@",
            "saxpy with a CUDA kernel: z = a*x + y over n floats",
            {{"n", expr::ParamType::integer, std::int64_t{1} << 24, "elements", {}},
             {"a", expr::ParamType::number, 2.0, "the scale", {}},
             {"block", expr::ParamType::integer, std::int64_t{256}, "threads a block", {}}},
            {expr::Device::cuda}};
  }

  // Inputs only: setup must not run the measured work, or the cold first call would be warm.
  void setup(expr::Context& ctx, const expr::Params& p) override {
    n_ = static_cast<std::size_t>(p.integer("n"));
    a_ = static_cast<float>(p.number("a"));
    block_ = static_cast<unsigned>(p.integer("block"));
    if (n_ == 0 || block_ == 0 || block_ > 1024) throw std::invalid_argument("@NAME@: n must be positive and block in 1..1024");
    check(cudaSetDevice(ctx.device_index()), "cudaSetDevice");
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device_index()), "cudaDeviceGetAttribute");
    grid_ = static_cast<unsigned>(4 * sms);  // a grid-stride loop: a few blocks per SM cover any n
    x_host_.resize(n_);
    y_host_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      x_host_[i] = 1.0f + 0.25f * static_cast<float>(i % 7);
      y_host_[i] = 0.5f * static_cast<float>(i % 3);
    }
    for (float** buffer : {&x_, &y_, &z_}) check(cudaMalloc(buffer, n_ * sizeof(float)), "cudaMalloc");
    check(cudaMemcpy(x_, x_host_.data(), n_ * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy x");
    check(cudaMemcpy(y_, y_host_.data(), n_ * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy y");
    check(cudaMemset(z_, 0xFF, n_ * sizeof(float)), "cudaMemset z");  // NaN until written
  }

  // The measured region, called many times. It queues the kernel and returns: expr synchronises
  // where it measures, and a synchronisation here would be timed as the kernel's.
  void run(expr::Context& ctx) override {
    auto range = ctx.range("saxpy");
    saxpy<<<grid_, block_>>>(n_, a_, x_, y_, z_);
    check(cudaGetLastError(), "saxpy launch");
  }

  // Once, right after the cold first call: that call's output against a float64 reference.
  void verify(expr::Context& ctx) override {
    std::vector<float> z(n_);
    check(cudaMemcpy(z.data(), z_, n_ * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy z");
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const double want = static_cast<double>(a_) * x_host_[i] + y_host_[i];
      error += (z[i] - want) * (z[i] - want);
      norm += want * want;
    }
    ctx.report_correctness("z vs a float64 reference", std::sqrt(error / norm), 1e-6);
  }

  void teardown(expr::Context&) override {
    for (float* buffer : {x_, y_, z_}) cudaFree(buffer);
    x_ = y_ = z_ = nullptr;
  }

  // In the parent: what the trace should show, judged after the run like the series' guesses.
  std::vector<expr::Guess> guesses(const expr::Params&) const override {
    return {{"kernels(\"saxpy\") == 1", "run() launches one kernel"}};
  }

  // For gbps and tflops: 2 FLOPs an element; x and y read, z written.
  std::optional<expr::Work> work(const expr::Params& p) const override {
    const auto n = static_cast<double>(p.integer("n"));
    return expr::Work{2 * n, 3 * n * sizeof(float)};
  }

 private:
  std::size_t n_ = 0;
  float a_ = 0;
  unsigned block_ = 0, grid_ = 0;
  std::vector<float> x_host_, y_host_;
  float *x_ = nullptr, *y_ = nullptr, *z_ = nullptr;
};

}  // namespace

EXPR_PLUGIN(@CLASS@)
