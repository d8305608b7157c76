// What tracing adds per kernel launch, on a launch-bound loop (the add_loop plugin: tens of
// thousands of tiny in-place adds), measured in one process, in this order: untraced; the ATen op
// observer with host ranges alone; CUPTI activity alone; both, as `expr run` traces; and untraced
// again, to see what CUPTI leaves behind. bench/torch_profiler_overhead.py does the same with
// torch.profiler.
//
//   expr_bench_tracing [launches] [repeats]
#include <fmt/format.h>

#include <cstdlib>

#include "cupti/collector.hpp"
#include "device/cuda.hpp"
#include "loader/plugin_library.hpp"
#include "runner/context.hpp"
#include "trace/clock.hpp"

using namespace expr;

int main(int argc, char** argv) {
  const std::int64_t launches = argc > 1 ? std::atoll(argv[1]) : 20000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;

  cuda::select(0);  // as a worker does
  loader::PluginCatalog catalog(loader::search_path({}));
  const auto lib = catalog.find("add_loop");
  trace::Trace trace;
  trace::HostRecorder recorder(trace);
  runner::Measurement sink;
  runner::WorkerContext ctx(Device::cuda, 0, recorder, sink, [](LogLevel, std::string_view) {});
  auto plugin = lib->create();
  plugin->setup(ctx, Params({{"launches", launches}}));
  plugin->run(ctx);
  cuda::synchronize();

  // Wall time per launch of one run(), device work included; the best of `repeats`.
  auto per_launch = [&](bool record_host) {
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
      cuda::synchronize();
      const auto t0 = trace::now();
      if (record_host) recorder.begin_iteration();
      plugin->run(ctx);
      if (record_host) recorder.end_iteration();
      cuda::synchronize();
      best = std::min(best, static_cast<double>(trace::now() - t0) / static_cast<double>(launches));
    }
    return best;
  };
  // One phase with the device collector on, optionally with the ATen op observer too.
  auto with_cupti = [&](bool ops) {
    cupti::Collector collector(trace);
    if (!collector.start()) throw std::runtime_error("CUPTI unavailable: " + trace.collection.device_unavailable);
    if (ops) ctx.start_hooks();
    const double t = per_launch(ops);
    if (ops) ctx.stop_hooks();
    collector.stop();
    return t;
  };

  const double untraced = per_launch(false);
  ctx.start_hooks();
  const double ops_only = per_launch(true);
  ctx.stop_hooks();
  const double cupti_only = with_cupti(false);
  const auto stop_start = trace::now();
  const double traced = with_cupti(true);
  const double stop_seconds = static_cast<double>(trace::now() - stop_start) * 1e-9;  // includes the phase itself
  const double after = per_launch(false);

  auto line = [&](const char* what, double t) {
    fmt::print("{:34s} {:8.3f} µs per launch   added {:+.3f} µs\n", what, t / 1e3, (t - untraced) / 1e3);
  };
  fmt::print("launches per run {}, best of {} runs each\n", launches, repeats);
  fmt::print("{:34s} {:8.3f} µs per launch\n", "untraced", untraced / 1e3);
  line("ATen op observer and host ranges", ops_only);
  line("CUPTI activity only", cupti_only);
  line("traced as expr traces (both)", traced);
  line("untraced after tracing", after);
  fmt::print("records of the last traced phase and before: {} kernels, {} API calls, {} host ranges; dropped {}; "
             "that phase with its stop() took {:.3f} s\n",
             trace.kernels.size(), trace.api_calls.size(), trace.ranges.size(), trace.collection.dropped_records, stop_seconds);
  return 0;
}
