// cuda_probe: raw CUDA work whose trace is known in advance, to check expr's device side (the CUPTI
// collector and the occupancy calculator) without LibTorch.
//
// One run(), on the legacy default stream: four kernels through cudaLaunchKernel, each bounded on
// sm_90 by a different resource (threads, registers, shared memory, the block limit); a
// device-to-device copy and a memset of `bytes`; and one kernel through the driver's
// cuLaunchKernelEx with clusters of 2 blocks. setup() reports what the CUDA API says about each
// kernel as facts, so the guesses compare the trace with them; verify() checks every output of the
// first call on the host.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <expr/plugin.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

// ---- Kernels ------------------------------------------------------------------------------------
// Each reads a real buffer (values in [1, 2)) and writes its own output, so run() can be repeated
// and verify() can check every output.

constexpr unsigned threads_block = 1024;
constexpr unsigned registers_block = 256;
constexpr unsigned shared_block = 256;
constexpr unsigned blocks_block = 32;
constexpr unsigned launch_ex_block = 128;
constexpr unsigned cluster_size = 2;

constexpr int live_values = 64;  // values each probe_registers thread keeps in registers
constexpr int smoothing_rounds = 8;
constexpr std::size_t shared_tile_bytes = 100 * 1024;  // more than the default 48 KiB: needs the opt-in
constexpr std::size_t shared_tile = shared_tile_bytes / sizeof(float);
constexpr unsigned char memset_byte = 0x3F;  // a float of 0x3F3F3F3F is 0.747...

// 1024-thread blocks: 2 fill the 2048 thread slots of an SM. The bounds cap registers at 32 a thread,
// so registers allow 2 blocks as well and never fewer.
__global__ void __launch_bounds__(threads_block, 2) probe_threads(const float* in, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = in[i] * 1.5f + 0.25f;
}

// Each thread loads live_values consecutive elements and smooths them cyclically, so all stay live
// in registers (over 64 of them a thread): 256-thread blocks are then bounded by the register file.
// (Consecutive rather than strided elements: strided ones need a live 64-bit address each.)
__global__ void __launch_bounds__(registers_block, 1) probe_registers(const float* in, float* out, std::size_t n) {
  const std::size_t threads = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t thread = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (std::size_t chunk = 0; chunk < n; chunk += threads * live_values) {
    const std::size_t first = chunk + thread * live_values;
    float v[live_values];
#pragma unroll
    for (int k = 0; k < live_values; ++k) v[k] = first + k < n ? in[first + k] : 0.0f;
#pragma unroll
    for (int round = 0; round < smoothing_rounds; ++round) {
      const float v0 = v[0];
#pragma unroll
      for (int k = 0; k + 1 < live_values; ++k) v[k] = 0.5f * (v[k] + v[k + 1]);
      v[live_values - 1] = 0.5f * (v[live_values - 1] + v0);
    }
#pragma unroll
    for (int k = 0; k < live_values; ++k)
      if (first + k < n) out[first + k] = v[k];
  }
}

// Each block stages a 100 KiB tile in dynamic shared memory and mirrors it: with the 1 KiB the
// system reserves per block, 2 blocks fit in an sm_90 SM's 228 KiB.
__global__ void __launch_bounds__(shared_block) probe_shared(const float* in, float* out, std::size_t n) {
  extern __shared__ float tile[];
  for (std::size_t base = blockIdx.x * shared_tile; base < n; base += std::size_t{gridDim.x} * shared_tile) {
    const std::size_t length = n - base < shared_tile ? n - base : shared_tile;
    for (std::size_t i = threadIdx.x; i < length; i += blockDim.x) tile[i] = in[base + i];
    __syncthreads();
    for (std::size_t i = threadIdx.x; i < length; i += blockDim.x)
      out[base + i] = tile[i] + 0.5f * tile[length - 1 - i];
    __syncthreads();
  }
}

// One-warp blocks with at most 32 registers a thread: registers and warp slots would allow 64
// blocks, so the limit of 32 resident blocks binds.
__global__ void __maxnreg__(32) probe_blocks(const float* in, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = sqrtf(in[i]) + 1.0f;
}

// Launched through cuLaunchKernelEx in clusters of 2; reads what the copy and the memset wrote.
__global__ void probe_launch_ex(const float* copied, const float* set, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = copied[i] * set[i];
}

namespace {

// ---- Checking -----------------------------------------------------------------------------------

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("cuda_probe: ") + what + ": " + cudaGetErrorName(status) + ": " +
                             cudaGetErrorString(status));
}

// Driver functions come through the runtime's entry-point query, so the plugin does not link
// libcuda: it loads, describes itself and states its guesses on machines without a driver too.
template <class Function>
Function* driver_function(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check(cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &found), name);
  if (found != cudaDriverEntryPointSuccess || !function)
    throw std::runtime_error(std::string("cuda_probe: the driver has no ") + name);
  return reinterpret_cast<Function*>(function);
}

void check(CUresult status, const char* what) {
  if (status == CUDA_SUCCESS) return;
  const char* name = nullptr;
  driver_function<decltype(cuGetErrorName)>("cuGetErrorName")(status, &name);
  throw std::runtime_error(std::string("cuda_probe: ") + what + ": " + (name ? name : "CUresult " + std::to_string(status)));
}

struct DeviceFree {
  void operator()(void* p) const noexcept { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<void, DeviceFree>;

DeviceBuffer allocate(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  return DeviceBuffer(p);
}

float* floats(const DeviceBuffer& b) { return static_cast<float*>(b.get()); }

// ---- The kernels as launched --------------------------------------------------------------------

struct Kernel {
  const char* name;
  const void* function;
  unsigned block;
  std::size_t dynamic_shared;
};

const Kernel runtime_kernels[] = {
    {"probe_threads", reinterpret_cast<const void*>(&probe_threads), threads_block, 0},
    {"probe_registers", reinterpret_cast<const void*>(&probe_registers), registers_block, 0},
    {"probe_shared", reinterpret_cast<const void*>(&probe_shared), shared_block, shared_tile_bytes},
    {"probe_blocks", reinterpret_cast<const void*>(&probe_blocks), blocks_block, 0},
};
const Kernel launch_ex_kernel{"probe_launch_ex", reinterpret_cast<const void*>(&probe_launch_ex), launch_ex_block, 0};

// ---- Host references ----------------------------------------------------------------------------

std::vector<float> input_values(std::size_t n) {
  std::vector<float> v(n);
  std::uint32_t state = 12345;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;  // a fixed LCG: the same input every run
    x = 1.0f + static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

std::vector<double> reference_threads(const std::vector<float>& in) {
  std::vector<double> r(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) r[i] = in[i] * 1.5 + 0.25;
  return r;
}

std::vector<double> reference_registers(const std::vector<float>& in, std::size_t threads) {
  std::vector<double> r(in.size());
  const std::size_t n = in.size();
  double v[live_values];
  for (std::size_t chunk = 0; chunk < n; chunk += threads * live_values)
    for (std::size_t thread = 0; thread < threads; ++thread) {
      const std::size_t first = chunk + thread * live_values;
      if (first >= n) break;
      for (int k = 0; k < live_values; ++k) v[k] = first + k < n ? in[first + k] : 0.0;
      for (int round = 0; round < smoothing_rounds; ++round) {
        const double v0 = v[0];
        for (int k = 0; k + 1 < live_values; ++k) v[k] = 0.5 * (v[k] + v[k + 1]);
        v[live_values - 1] = 0.5 * (v[live_values - 1] + v0);
      }
      for (int k = 0; k < live_values && first + k < n; ++k) r[first + k] = v[k];
    }
  return r;
}

std::vector<double> reference_shared(const std::vector<float>& in) {
  std::vector<double> r(in.size());
  for (std::size_t base = 0; base < in.size(); base += shared_tile) {
    const std::size_t length = std::min(shared_tile, in.size() - base);
    for (std::size_t i = 0; i < length; ++i) r[base + i] = in[base + i] + 0.5 * in[base + length - 1 - i];
  }
  return r;
}

std::vector<double> reference_blocks(const std::vector<float>& in) {
  std::vector<double> r(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) r[i] = std::sqrt(static_cast<double>(in[i])) + 1.0;
  return r;
}

float memset_float() {
  std::uint32_t bits = 0;
  std::memset(&bits, memset_byte, sizeof bits);
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::vector<double> reference_launch_ex(const std::vector<float>& in) {
  std::vector<double> r(in.size());
  const double set = memset_float();
  for (std::size_t i = 0; i < in.size(); ++i) r[i] = in[i] * set;
  return r;
}

// The largest relative error; NaN (an unwritten output is NaN) wins.
double worst_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(got[i] - want[i]) / std::abs(want[i]);
    if (std::isnan(e) || e > worst) worst = e;
    if (std::isnan(worst)) break;
  }
  return worst;
}

std::vector<float> download(const DeviceBuffer& b, std::size_t n) {
  std::vector<float> host(n);
  check(cudaMemcpy(host.data(), b.get(), n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy DtoH");
  return host;
}

std::string bytes_literal(std::int64_t bytes) { return std::to_string(bytes) + "B"; }

// ---- The plugin ---------------------------------------------------------------------------------

class CudaProbe final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {
        "cuda_probe",
        "raw CUDA kernels with known footprints, a DtoD copy, a memset and a cuLaunchKernelEx cluster launch",
        {
            {"bytes",
             expr::ParamType::integer,
             std::int64_t{64} << 20,
             "size of the DtoD copy and of the memset, and of every kernel's buffer (a multiple of 4)",
             {}},
            {"grid",
             expr::ParamType::integer,
             std::int64_t{264},
             "blocks per kernel launch (even: probe_launch_ex runs in clusters of 2); 264 = 2 x 132 SMs",
             {}},
            {"synchronize",
             expr::ParamType::boolean,
             false,
             "end run() with cudaDeviceSynchronize(), as a plugin that waits for its own result does: the runner cannot enqueue "
             "such calls behind a held queue, and says so",
             {}},
        },
        {expr::Device::cuda},
    };
  }

  void setup(expr::Context& ctx, const expr::Params& params) override {
    bytes_ = params.integer("bytes");
    grid_ = params.integer("grid");
    synchronize_ = params.boolean("synchronize");
    if (bytes_ <= 0 || bytes_ % 4 != 0)
      throw std::invalid_argument("cuda_probe: bytes must be a positive multiple of 4");
    if (grid_ <= 0 || grid_ % cluster_size != 0 || grid_ > (std::int64_t{1} << 31) - 1)
      throw std::invalid_argument("cuda_probe: grid must be a positive even number of blocks");
    n_ = static_cast<std::size_t>(bytes_) / sizeof(float);

    check(cudaSetDevice(ctx.device_index()), "cudaSetDevice");
    int major = 0;
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx.device_index()),
          "cudaDeviceGetAttribute");
    if (major < 9)
      throw std::runtime_error("cuda_probe: needs compute capability 9.0 or newer (thread block clusters)");

    const auto input = input_values(n_);
    input_ = allocate(n_ * sizeof(float));
    check(cudaMemcpy(input_.get(), input.data(), n_ * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy HtoD");
    for (auto& out : outputs_) {
      out = allocate(n_ * sizeof(float));
      check(cudaMemset(out.get(), 0xFF, n_ * sizeof(float)), "cudaMemset");  // NaN until written
    }
    copied_ = allocate(n_ * sizeof(float));
    set_ = allocate(n_ * sizeof(float));

    check(cudaFuncSetAttribute(reinterpret_cast<const void*>(&probe_shared),
                               cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_tile_bytes)),
          "cudaFuncSetAttribute(probe_shared, MaxDynamicSharedMemorySize)");
    cudaFunction_t function = nullptr;
    check(cudaGetFuncBySymbol(&function, launch_ex_kernel.function), "cudaGetFuncBySymbol(probe_launch_ex)");
    launch_ex_function_ = function;
    launch_kernel_ex_ = driver_function<decltype(cuLaunchKernelEx)>("cuLaunchKernelEx");

    for (const auto& k : runtime_kernels) report_truth(ctx, k);
    report_truth(ctx, launch_ex_kernel);
  }

  void run(expr::Context& ctx) override {
    {
      auto range = ctx.range("runtime launches");
      const float* in = floats(input_);
      for (std::size_t k = 0; k < outputs_.size() - 1; ++k) launch(runtime_kernels[k], in, floats(outputs_[k]));
    }
    {
      auto range = ctx.range("copy and memset");
      check(cudaMemcpyAsync(copied_.get(), input_.get(), static_cast<std::size_t>(bytes_), cudaMemcpyDeviceToDevice,
                            cudaStreamLegacy),
            "cudaMemcpyAsync DtoD");
      check(cudaMemsetAsync(set_.get(), memset_byte, static_cast<std::size_t>(bytes_), cudaStreamLegacy),
            "cudaMemsetAsync");
    }
    {
      auto range = ctx.range("driver launch");
      launch_ex(floats(copied_), floats(set_), floats(outputs_.back()));
    }
    if (synchronize_) check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  // Every output of the first call against host references; the runner has waited for the device.
  void verify(expr::Context& ctx) override {
    const auto input = input_values(n_);
    double worst = 0;
    std::string worst_what = "none";
    auto consider = [&](double e, const std::string& what) {
      if (std::isnan(worst)) return;
      if (std::isnan(e) || e > worst) {
        worst = e;
        worst_what = what;
      }
    };
    // One reference at a time: each is n doubles.
    const auto threads = static_cast<std::size_t>(grid_) * registers_block;
    consider(worst_error(download(outputs_[0], n_), reference_threads(input)), "probe_threads");
    consider(worst_error(download(outputs_[1], n_), reference_registers(input, threads)), "probe_registers");
    consider(worst_error(download(outputs_[2], n_), reference_shared(input)), "probe_shared");
    consider(worst_error(download(outputs_[3], n_), reference_blocks(input)), "probe_blocks");
    consider(worst_error(download(outputs_[4], n_), reference_launch_ex(input)), "probe_launch_ex");

    const auto copied = download(copied_, n_);
    consider(std::memcmp(copied.data(), input.data(), n_ * sizeof(float)) == 0 ? 0.0 : 1.0, "the DtoD copy");
    std::vector<unsigned char> set(n_ * sizeof(float));
    check(cudaMemcpy(set.data(), set_.get(), set.size(), cudaMemcpyDeviceToHost), "cudaMemcpy DtoH");
    const bool all_set = std::all_of(set.begin(), set.end(), [](unsigned char b) { return b == memset_byte; });
    consider(all_set ? 0.0 : 1.0, "the memset");

    ctx.info("cuda_probe: worst relative error " + std::to_string(worst) + " (" + worst_what + ")");
    ctx.report_correctness("every kernel output, the copy and the memset against host references", worst, 1e-5);
  }

  void teardown(expr::Context&) override {
    input_.reset();
    for (auto& out : outputs_) out.reset();
    copied_.reset();
    set_.reset();
  }

  std::vector<expr::Guess> guesses(const expr::Params& params) const override {
    const auto bytes = bytes_literal(params.integer("bytes"));
    const auto grid = std::to_string(params.integer("grid"));
    std::vector<expr::Guess> g{
        {"kernels == 5", "four kernels through cudaLaunchKernel and one through cuLaunchKernelEx per run"},
        {"kernels(api=\"cudaLaunchKernel\") == 4",
         "run() calls cudaLaunchKernel itself (CUDA 13 sends <<<>>> through __cudaLaunchKernel instead)"},
        {"kernels(api=\"cuLaunchKernelEx\") == 1", "probe_launch_ex goes through the driver API"},
        {"kernel(\"probe_launch_ex\").launch_api == \"cuLaunchKernelEx\"", "launched with cuLaunchKernelEx"},
        {"kernel(\"probe_launch_ex\").cluster == 2", "launched with a cluster dimension attribute of 2 x 1 x 1"},
        {"kernel(\"probe_threads\").block == 1024", "probe_threads runs 1024-thread blocks"},
        {"kernel(\"probe_threads\").limiter == \"threads\"",
         "2 blocks of 1024 threads fill an SM's 2048 thread slots; registers (at most 32) allow 2 as well"},
        {"kernel(\"probe_threads\").occupancy == 100%", "2 blocks x 32 warps fill all 64 warp slots of an sm_90 SM"},
        {"kernel(\"probe_registers\").block == 256", "probe_registers runs 256-thread blocks"},
        {"kernel(\"probe_registers\").registers > 64", "each thread keeps 64 values live"},
        {"kernel(\"probe_registers\").limiter == \"registers\"",
         "over 64 registers a thread leave room for fewer than the 8 blocks the thread slots allow"},
        {"kernel(\"probe_shared\").shared == 100KiB", "a 100 KiB tile of dynamic shared memory, no static"},
        {"kernel(\"probe_shared\").limiter == \"shared_memory\"",
         "101 KiB a block with the 1 KiB the system reserves: 2 fit in 228 KiB"},
        {"kernel(\"probe_shared\").blocks_per_sm == 2", "2 x 101 KiB fit in 228 KiB, 3 do not"},
        {"kernel(\"probe_blocks\").block == 32", "probe_blocks runs one-warp blocks"},
        {"kernel(\"probe_blocks\").limiter == \"blocks\"",
         "one-warp blocks of at most 32 registers: the limit of 32 resident blocks binds before warps or registers"},
        {"kernel(\"probe_blocks\").blocks_per_sm == 32", "the sm_90 limit of resident blocks per SM"},
        {"copies(kind=DtoD) == 1", "one cudaMemcpyAsync DtoD per run"},
        {"copy_bytes(kind=DtoD) == " + bytes, "the copy moves `bytes`"},
        {"memsets == 1", "one cudaMemsetAsync per run"},
        {"memset_bytes == " + bytes, "the memset covers `bytes`"},
        {"api_calls(\"^cudaMemcpyAsync$\") == 1", "the copy's runtime call, named without CUPTI's version suffix"},
        {"api_calls(\"^cudaMemsetAsync$\") == 1", "the memset's runtime call"},
    };
    for (const auto* k :
         {&runtime_kernels[0], &runtime_kernels[1], &runtime_kernels[2], &runtime_kernels[3], &launch_ex_kernel}) {
      const std::string name = k->name;
      const std::string selector = "kernel(\"" + name + "\")";
      g.push_back({selector + ".grid == " + grid, "launched with `grid` blocks"});
      g.push_back({selector + ".registers == fact(\"" + name + ".registers\")",
                   "CUPTI reports the registers cudaFuncGetAttributes gives"});
      g.push_back({selector + ".blocks_per_sm == fact(\"" + name + ".blocks_per_sm\")",
                   "expr's occupancy calculator agrees with cudaOccupancyMaxActiveBlocksPerMultiprocessor"});
      if (k->dynamic_shared == 0)
        g.push_back({selector + ".shared == fact(\"" + name + ".static_shared\")",
                     "no dynamic shared memory: all of it is the static shared memory the compiler reports"});
    }
    return g;
  }

  std::optional<expr::Work> work(const expr::Params& params) const override {
    // Four kernels read and write `bytes` each; the copy reads and writes it, the memset writes it,
    // and probe_launch_ex reads two buffers and writes one.
    return expr::Work{0, 14.0 * static_cast<double>(params.integer("bytes"))};
  }

 private:
  void launch(const Kernel& k, const float* in, float* out) {
    std::size_t n = n_;
    void* args[] = {&in, &out, &n};
    check(cudaLaunchKernel(k.function, dim3(static_cast<unsigned>(grid_)), dim3(k.block), args, k.dynamic_shared,
                           cudaStreamLegacy),
          k.name);
  }

  void launch_ex(const float* copied, const float* set, float* out) {
    std::size_t n = n_;
    void* args[] = {&copied, &set, &out, &n};
    CUlaunchAttribute cluster{};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = cluster_size;
    cluster.value.clusterDim.y = 1;
    cluster.value.clusterDim.z = 1;
    CUlaunchConfig config{};
    config.gridDimX = static_cast<unsigned>(grid_);
    config.gridDimY = 1;
    config.gridDimZ = 1;
    config.blockDimX = launch_ex_kernel.block;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = 0;
    config.hStream = CU_STREAM_LEGACY;
    config.attrs = &cluster;
    config.numAttrs = 1;
    check(launch_kernel_ex_(&config, launch_ex_function_, args, nullptr), "cuLaunchKernelEx(probe_launch_ex)");
  }

  // What the CUDA API says about a kernel, for the guesses to compare the trace with.
  static void report_truth(expr::Context& ctx, const Kernel& k) {
    cudaFuncAttributes attributes{};
    check(cudaFuncGetAttributes(&attributes, k.function), "cudaFuncGetAttributes");
    int blocks = 0;
    check(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.function, static_cast<int>(k.block), k.dynamic_shared),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    const std::string name = k.name;
    ctx.report_fact(name + ".registers", std::to_string(attributes.numRegs));
    ctx.report_fact(name + ".static_shared", std::to_string(attributes.sharedSizeBytes));
    ctx.report_fact(name + ".blocks_per_sm", std::to_string(blocks));
  }

  std::int64_t bytes_ = 0;
  std::int64_t grid_ = 0;
  bool synchronize_ = false;
  std::size_t n_ = 0;
  DeviceBuffer input_;
  std::array<DeviceBuffer, 5> outputs_;  // runtime_kernels in order, then probe_launch_ex
  DeviceBuffer copied_;
  DeviceBuffer set_;
  CUfunction launch_ex_function_ = nullptr;
  decltype(cuLaunchKernelEx)* launch_kernel_ex_ = nullptr;
};

}  // namespace

EXPR_PLUGIN(CudaProbe)
