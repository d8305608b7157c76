// What the runner's timing loops cost per iteration, against a bare loop calling the same plugin's
// run() in the same process with one clock reading on each side of all the calls: the host loop
// (a clock read on each side of every run(), a device sync before it on cuda, the stopping check)
// and, on cuda, the device loop (a CUDA event after each run()) against a bare loop timed by one
// event pair.
//
//   expr_bench_runner PLUGIN [cpu|cuda] [iterations] [param=value ...]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "device/cuda.hpp"
#include "loader/plugin_library.hpp"
#include "runner/context.hpp"
#include "runner/experiment.hpp"
#include "trace/clock.hpp"

using namespace expr;

namespace {

series::ExperimentPlan make_plan(const std::string& plugin, int iterations, int argc, char** argv, int first_param) {
  loader::PluginCatalog catalog(loader::search_path({}, loader::Origin::option));
  series::ExperimentPlan plan;
  plan.name = "bench";
  plan.plugin = catalog.find(plugin);
  std::map<std::string, ParamValue> values;
  for (const auto& spec : plan.plugin->description().params) values[spec.name] = spec.default_value;
  for (int i = first_param; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    const auto& params = plan.plugin->description().params;
    const auto spec = std::find_if(params.begin(), params.end(), [&](auto& s) { return s.name == kv.substr(0, eq); });
    if (eq == std::string::npos || spec == params.end()) throw std::invalid_argument("bad parameter " + kv);
    values[spec->name] = series::typed_param(*spec, kv.substr(eq + 1));
  }
  plan.params = Params(values);
  // Exactly `iterations` samples per loop: any noise is accepted once that many are taken.
  plan.iterations = {3, 0, iterations, 0.0, 1e9, 1.0};
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: expr_bench_runner PLUGIN [cpu|cuda] [iterations] [param=value ...]\n");
    return 2;
  }
  const std::string plugin = argv[1];
  const Device device = argc > 2 && std::string(argv[2]) == "cuda" ? Device::cuda : Device::cpu;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 2000;
  const auto plan = make_plan(plugin, iterations, argc, argv, 4);
  const bool cuda = device == Device::cuda;
  if (cuda) cuda::select(0);  // as a worker does

  // The bare loops: the plugin's run() and nothing else.
  trace::Trace unused;
  trace::HostRecorder recorder(unused);
  outcome::Measurement sink;
  runner::WorkerContext ctx(device, 0, "", recorder, sink, [](LogLevel, std::string_view) {});
  auto p = plan.plugin->create();
  p->setup(ctx, plan.params);
  ctx.setup_done();  // as a worker does: trace hooks stop watching setup
  for (int i = 0; i < 50; ++i) p->run(ctx);  // warm: allocator, thread pools, caches
  if (cuda) cuda::synchronize();

  // No clock inside the bare loop: one reading on each side of all the calls.
  const auto host_start = trace::now();
  for (int i = 0; i < iterations; ++i) {
    if (cuda) cuda::synchronize();
    p->run(ctx);
  }
  if (cuda) cuda::synchronize();
  const double bare_host_loop = static_cast<double>(trace::now() - host_start) / iterations;

  double bare_device = 0;
  if (cuda) {
    cuda::EventTimer events(2);
    events.record();
    for (int i = 0; i < iterations; ++i) p->run(ctx);
    events.record();
    bare_device = events.elapsed().at(0) / iterations;
  }
  p->teardown(ctx);
  p.reset();

  // The runner's loops on the same plugin, in this process.
  const auto m = runner::run_experiment(plan, {device, 0}, {}, "/dev/null", {});
  if (m.status != outcome::Status::ok) {
    fmt::print(stderr, "the runner failed: {}\n", m.reason);
    return 1;
  }
  const double runner_host_loop = m.host->seconds * 1e9 / static_cast<double>(m.host->count);
  fmt::print("plugin {} on {}, {} iterations a loop\n", plugin, cuda ? "cuda" : "cpu", iterations);
  fmt::print("host loop, wall per iteration:  bare {:.3f} µs   runner {:.3f} µs   runner overhead {:+.3f} µs\n",
             bare_host_loop / 1e3, runner_host_loop / 1e3, (runner_host_loop - bare_host_loop) / 1e3);
  fmt::print("host time of run():             runner median {:.3f} µs (what it reports; bare wall above includes the loop)\n",
             m.host->median / 1e3);
  if (cuda) {
    const double runner_device_loop = m.device_time->seconds * 1e9 / static_cast<double>(m.device_time->iterations);
    fmt::print("device time per iteration:      bare (one event pair) {:.3f} µs   runner median {:.3f} µs   ratio {:.4f}\n",
               bare_device / 1e3, m.device_time->median / 1e3, m.device_time->median / bare_device);
    fmt::print("device loop, wall per iteration: runner {:.3f} µs (including its syncs and lead-in call per batch)\n",
               runner_device_loop / 1e3);
  }
  return 0;
}
