// The range profiler alone, for a diagnosis on a GPU machine when the counters phase of a run says
// the counters were unavailable: the documented metrics of two launches of a small kernel, first in
// a process that has not used CUPTI yet, then after CUPTI's Activity API traced a launch (as in a
// worker, whose counters phase follows its traced iterations), then under iteration replay. Each
// step prints its ranges or the reason CUPTI gave; every CUPTI call is logged on stderr with its
// result.
//
//     expr_bench_counters_probe [device]
//
// Exit status 0 when every step measured both launches.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cupti/collector.hpp"
#include "cupti/range_profiler.hpp"
#include "trace/counters.hpp"
#include "util/log.hpp"

// Two launches of a small kernel: one warp, then many waves of full blocks (counters_probe_kernels.cu).
void launch_two(float* x);

namespace {

bool measure(const char* step, int device, float* x, expr::trace::CounterReplay replay) {
  std::vector<std::string> metrics;
  for (const auto& m : expr::trace::counter_metrics) metrics.emplace_back(m.nsight);
  try {
    expr::cupti::RangeProfiler profiler(device, metrics, 16, replay);
    bool failed = false;
    const auto profile = profiler.profile([&] {
      launch_two(x);
      if (const auto e = cudaDeviceSynchronize(); e != cudaSuccess) {
        fmt::print("{}: the kernels failed: {}\n", step, cudaGetErrorString(e));
        failed = true;
      }
    });
    if (failed) return false;
    fmt::print("{}: {} ranges, {} replay passes ({} replay), {} dropped\n", step, profile.ranges.size(), profile.passes,
               expr::trace::to_string(replay), profile.dropped_ranges);
    for (const auto& r : profile.ranges) {
      fmt::print("  range {}:", r.name);
      for (std::size_t i = 0; i < r.values.size(); ++i) fmt::print(" {} {:.2f}%", expr::trace::counter_metrics[i].field, r.values[i]);
      fmt::print("\n");
    }
    return profile.ranges.size() == 2;
  } catch (const expr::cupti::CountersUnavailable& e) {
    fmt::print("{}: counters unavailable: {}\n", step, e.what());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  expr::log::set_terminal_level(expr::log::Level::info);  // each CUPTI call and its result on stderr: what this probe is for
  if (const auto e = cudaSetDevice(device); e != cudaSuccess) {
    fmt::print("no device {}: {}\n", device, cudaGetErrorString(e));
    return 2;
  }
  float* x = nullptr;
  const std::size_t n = 132 * 16 * 128;
  if (cudaMalloc(reinterpret_cast<void**>(&x), n * sizeof(float)) != cudaSuccess || cudaMemset(x, 0, n * sizeof(float)) != cudaSuccess) {
    fmt::print("cannot allocate {} floats on device {}\n", n, device);
    return 2;
  }
  launch_two(x);  // loads the module before anything is measured
  cudaDeviceSynchronize();
  const bool fresh = measure("fresh process", device, x, expr::trace::CounterReplay::kernel);

  expr::trace::Trace trace;
  {
    expr::cupti::Collector collector(trace);
    const bool traced = collector.start();
    launch_two(x);
    collector.stop();
    fmt::print("activity API: {}, {} kernels traced\n", traced ? "on" : "unavailable: " + trace.collection.device_unavailable,
               trace.kernels.size());
  }
  const bool after_tracing = measure("after the Activity API", device, x, expr::trace::CounterReplay::kernel);
  const bool iteration = measure("iteration replay", device, x, expr::trace::CounterReplay::iteration);
  cudaFree(x);
  return fresh && after_tracing && iteration ? 0 : 1;
}
