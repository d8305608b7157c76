#include "device/cuda.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "util/regex.hpp"

namespace expr::cuda {

void check(int status, const char* what) {
  const auto e = static_cast<cudaError_t>(status);
  if (e != cudaSuccess)
    throw std::runtime_error(fmt::format("{}: {}: {}", what, cudaGetErrorName(e), cudaGetErrorString(e)));
}

Availability probe() {
  int count = 0;
  const auto e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return {0, fmt::format("no CUDA device: {}", cudaGetErrorString(e))};
  if (count == 0) return {0, "no CUDA device"};
  return {count, ""};
}

namespace {
int attribute(cudaDeviceAttr attr, int device) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, attr, device), "cudaDeviceGetAttribute");
  return v;
}
}  // namespace

trace::DeviceProperties properties(int device) {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  trace::DeviceProperties d;
  d.id = static_cast<std::uint32_t>(device);
  d.name = p.name;
  d.major = p.major;
  d.minor = p.minor;
  d.multiprocessors = p.multiProcessorCount;
  d.warp_size = p.warpSize;
  d.global_memory = p.totalGlobalMem;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.shared_per_block = static_cast<int>(p.sharedMemPerBlock);
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d.registers_per_sm = p.regsPerMultiprocessor;
  d.max_registers_per_block = p.regsPerBlock;
  d.shared_per_sm = static_cast<int>(p.sharedMemPerMultiprocessor);
  d.shared_per_block_optin = static_cast<int>(p.sharedMemPerBlockOptin);
  d.reserved_shared_per_block = attribute(cudaDevAttrReservedSharedMemoryPerBlock, device);
  return d;
}

std::map<std::string, std::string> environment(int device) {
  std::map<std::string, std::string> env;
  auto version = [](int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); };
  int driver = 0, runtime = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess) env["cuda_driver_api"] = version(driver);
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) env["cuda_runtime"] = version(runtime);
  // The driver's own version ("580.159.04") is what the kernel module reports; CUDA gives only the
  // CUDA version the driver supports.
  std::ifstream module("/proc/driver/nvidia/version");
  std::string line;
  static const util::Regex kernel_module(R"(.*?Kernel Module\s+(?:for \S+\s+)?([0-9][0-9.]+).*)");
  if (std::getline(module, line))
    if (const auto m = kernel_module.full_match(line)) env["driver"] = std::string(*(*m)[1]);
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) == cudaSuccess) {
    env["gpu"] = p.name;
    env["gpu_compute_capability"] = fmt::format("{}.{}", p.major, p.minor);
    env["gpu_memory_gib"] = fmt::format("{:.1f}", static_cast<double>(p.totalGlobalMem) / (1u << 30));
    env["gpu_multiprocessors"] = std::to_string(p.multiProcessorCount);
    // The card itself, written as nvidia-smi writes it: the history says which card ran.
    const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
    env["gpu_uuid"] = fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", u[0], u[1],
                                  u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  }
  return env;
}

void select(int device) { check(cudaSetDevice(device), "cudaSetDevice"); }

bool shared_by_processes(int device) {
  int mode = cudaComputeModeDefault;
  check(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device), "cudaDeviceGetAttribute");
  return mode == cudaComputeModeDefault;
}

void synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

std::string last_error() {
  const auto e = cudaGetLastError();
  return e == cudaSuccess ? "" : fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
}

EventTimer::EventTimer(std::size_t capacity) : events_(capacity, nullptr) {
  for (auto& e : events_) {
    cudaEvent_t ev{};
    check(cudaEventCreate(&ev), "cudaEventCreate");
    e = ev;
  }
}

EventTimer::~EventTimer() {
  for (auto e : events_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
}

void EventTimer::reset() { used_ = 0; }

void EventTimer::record() {
  if (used_ == events_.size()) throw std::logic_error("EventTimer: more points than its capacity");
  check(cudaEventRecord(static_cast<cudaEvent_t>(events_[used_++]), cudaStreamLegacy), "cudaEventRecord");
}

std::vector<double> EventTimer::elapsed() {
  std::vector<double> gaps;
  if (used_ < 2) return gaps;
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(events_[used_ - 1])), "cudaEventSynchronize");
  for (std::size_t i = 1; i < used_; ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(events_[i - 1]), static_cast<cudaEvent_t>(events_[i])),
          "cudaEventElapsedTime");
    gaps.push_back(static_cast<double>(ms) * 1e6);
  }
  return gaps;
}

}  // namespace expr::cuda
