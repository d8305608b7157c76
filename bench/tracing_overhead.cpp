// What tracing adds per kernel launch, on a launch-bound loop (the add_loop plugin: tens of
// thousands of tiny in-place adds), measured in one process: untraced; traced the way `expr run`
// traces (CUPTI activity, external correlation tags, the ATen op observer, host ranges); and
// untraced again after tracing stopped, to see what CUPTI leaves behind. Compare with
// bench/torch_profiler_overhead.py, which does the same with torch.profiler.
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
  auto per_launch = [&](bool traced) {
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
      cuda::synchronize();
      const auto t0 = trace::now();
      if (traced) recorder.begin_iteration();
      plugin->run(ctx);
      if (traced) recorder.end_iteration();
      cuda::synchronize();
      best = std::min(best, static_cast<double>(trace::now() - t0) / static_cast<double>(launches));
    }
    return best;
  };

  const double before = per_launch(false);
  cupti::Collector collector(trace);
  if (!collector.start()) {
    fmt::print(stderr, "CUPTI unavailable: {}\n", trace.collection.device_unavailable);
    return 1;
  }
  ctx.start_hooks();
  const double traced = per_launch(true);
  ctx.stop_hooks();
  const auto stop_start = trace::now();
  collector.stop();
  const double stop_seconds = static_cast<double>(trace::now() - stop_start) * 1e-9;
  const double after = per_launch(false);

  fmt::print("launches per run {}, best of {} runs each\n", launches, repeats);
  fmt::print("untraced                 {:8.3f} µs per launch\n", before / 1e3);
  fmt::print("traced (expr)            {:8.3f} µs per launch   added {:.3f} µs\n", traced / 1e3, (traced - before) / 1e3);
  fmt::print("untraced after tracing   {:8.3f} µs per launch   left behind {:+.3f} µs\n", after / 1e3, (after - before) / 1e3);
  fmt::print("records: {} kernels, {} API calls, {} op ranges; dropped {}; stop() (flush and merge) took {:.3f} s\n",
             trace.kernels.size(), trace.api_calls.size(), trace.ranges.size(), trace.collection.dropped_records, stop_seconds);
  return 0;
}
