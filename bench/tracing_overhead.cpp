// What tracing adds per kernel launch, on a launch-bound loop (the add_loop plugin: tens of
// thousands of tiny in-place adds): untraced, traced, and untraced again after tracing stopped, to
// see what is left behind. One mode per process, as a worker traces once: `ops` (the ATen op
// observer with host ranges), `cupti` (the CUPTI activity collector) or `both` (what `expr run`
// does). bench/torch_profiler_overhead.py does the same with torch.profiler.
//
//   expr_bench_tracing ops|cupti|both [launches] [repeats]
#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "cupti/collector.hpp"
#include "device/cuda.hpp"
#include "loader/plugin_library.hpp"
#include "runner/context.hpp"
#include "trace/clock.hpp"

using namespace expr;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "both";
  const std::int64_t launches = argc > 2 ? std::atoll(argv[2]) : 20000;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  const bool ops = mode == "ops" || mode == "both", cupti = mode == "cupti" || mode == "both";
  if (!ops && !cupti) {
    fmt::print(stderr, "usage: expr_bench_tracing ops|cupti|both [launches] [repeats]\n");
    return 2;
  }

  cuda::select(0);
  loader::PluginCatalog catalog(loader::search_path({}, loader::Origin::option));
  const auto lib = catalog.find("add_loop");
  trace::Trace trace;
  trace::HostRecorder recorder(trace);
  outcome::Measurement sink;
  runner::WorkerContext ctx(Device::cuda, 0, "", recorder, sink, [](LogLevel, std::string_view) {});
  auto plugin = lib->create();
  plugin->setup(ctx, Params({{"launches", launches}}));
  ctx.setup_done();  // as a worker does: trace hooks stop watching setup
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

  const double untraced = per_launch(false);
  std::optional<cupti::Collector> collector;
  if (cupti) {
    collector.emplace(trace);
    if (!collector->start()) {
      fmt::print(stderr, "CUPTI unavailable: {}\n", trace.collection.device_unavailable);
      return 1;
    }
  }
  if (ops) ctx.start_hooks();
  const double traced = per_launch(true);
  if (ops) ctx.stop_hooks();
  const auto stop_start = trace::now();
  if (collector) collector->stop();
  const double stop_seconds = static_cast<double>(trace::now() - stop_start) * 1e-9;
  const double after = per_launch(false);

  fmt::print("tracing: {} ({} launches per run, best of {} runs each)\n", mode, launches, repeats);
  fmt::print("  untraced                {:8.3f} µs per launch\n", untraced / 1e3);
  fmt::print("  traced                  {:8.3f} µs per launch   added {:+.3f} µs\n", traced / 1e3, (traced - untraced) / 1e3);
  fmt::print("  untraced after tracing  {:8.3f} µs per launch   added {:+.3f} µs\n", after / 1e3, (after - untraced) / 1e3);
  fmt::print("  records: {} kernels, {} API calls, {} host ranges; dropped {}; stop() took {:.3f} s\n", trace.kernels.size(),
             trace.api_calls.size(), trace.ranges.size(), trace.collection.dropped_records, stop_seconds);
  return 0;
}
