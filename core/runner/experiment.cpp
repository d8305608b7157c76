// The phases of one experiment inside a worker process: see experiment.hpp.
#include "runner/experiment.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "cupti/collector.hpp"
#include "device/cuda.hpp"
#include "runner/context.hpp"
#include "runner/sampler.hpp"
#include "runner/worker.hpp"
#include "trace/clock.hpp"
#include "trace/trace_file.hpp"

namespace expr::runner {

namespace {

double seconds_since(trace::Ns start) { return static_cast<double>(trace::now() - start) * 1e-9; }

// A failure inside one phase; the phase name goes in front of the reason.
struct PhaseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The parent asked the worker to stop (the run was interrupted); thrown between iterations.
struct Stopped {};

void stop_if_asked() {
  if (stop_requested()) throw Stopped{};
}

class Session {
 public:
  Session(const series::ExperimentPlan& plan, const Placement& placement, const ExperimentEvents& events)
      : plan_(plan), placement_(placement), cuda_(placement.device == Device::cuda), events_(events),
        ctx_(placement.device, placement.index, recorder_, m_, events.log) {
    m_.experiment = plan.name;
    m_.plugin = plan.plugin->description().name;
    m_.params = plan.params.values();
    m_.iterations = plan.iterations;
    m_.device = placement.device;
    mark("worker");
  }

  outcome::Measurement measure(const std::filesystem::path& trace_file) {
    return run_phases({
        {"setup", [&] { prepare(); }},
        {"first call", [&] { first_call(); }},
        {"verify", [&] { verify(); }},
        {"warm-up", [&] { warm_up(); }},
        {"timing",
         [&] {
           time_host();
           if (cuda_) time_device();
         }},
        {"tracing",
         [&] {
           if (plan_.iterations.traced == 0) return;
           progress("tracing", fmt::format("{} iterations", plan_.iterations.traced));
           trace(trace_file, plan_.iterations.traced);
           check_setup_rule();
         }},
        {"teardown", [&] { teardown(); }},
    });
  }

  outcome::Measurement trace_cold(const std::filesystem::path& trace_file) {
    return run_phases({
        {"setup", [&] { prepare(); }},
        {"cold call", [&] { cold_call(trace_file); }},
        {"teardown", [&] { teardown(); }},
    });
  }

 private:
  struct Phase {
    const char* name;
    std::function<void()> run;
  };

  // The first failure ends the experiment, the phase's name in front of its reason; what was
  // measured before it is kept.
  outcome::Measurement run_phases(const std::vector<Phase>& phases) {
    const char* phase = "";
    try {
      for (const auto& p : phases) {
        phase = p.name;
        stop_if_asked();
        mark(p.name);
        p.run();
        // Refused API use (report_correctness outside verify()) is recorded, not thrown, so a
        // plugin cannot swallow it: it fails the phase it happened in.
        if (!ctx_.violation().empty()) throw PhaseError(ctx_.violation());
      }
      m_.status = outcome::Status::ok;
      m_.reason = m_.setup_warning;
    } catch (const Stopped&) {
      m_.status = outcome::Status::interrupted;
      m_.reason = fmt::format("{}: stopped when the run was interrupted; what was measured before is kept", phase);
    } catch (const std::exception& e) {
      m_.status = outcome::Status::failed;
      m_.reason = fmt::format("{}: {}", phase, e.what());
    } catch (...) {
      m_.status = outcome::Status::failed;
      m_.reason = std::string(phase) + ": an exception that is not a std::exception";
    }
    mark("result");
    return std::move(m_);
  }

  void mark(const char* step) { m_.timeline.push_back({step, trace::now()}); }

  void progress(std::string_view phase, std::string_view detail) {
    if (events_.progress) events_.progress(phase, detail);
  }

  void check_device(const char* after) {
    if (!cuda_) return;
    if (auto e = cuda::last_error(); !e.empty()) throw PhaseError(fmt::format("CUDA error after {}: {}", after, e));
  }

  void sync() {
    if (cuda_) cuda::synchronize();
  }

  void prepare() {
    progress("setup", "");
    if (cuda_) {
      mark("cuda context");  // cudaSetDevice creates the device's primary context
      cuda::select(placement_.index);
      mark("device queries");
      m_.environment = cuda::environment(placement_.index);
      trace_.devices.push_back(cuda::properties(placement_.index));
    }
    mark("plugin setup");
    plugin_ = plan_.plugin->create();
    m_.work = plugin_->work(plan_.params);
    ctx_.entering("setup()");
    plugin_->setup(ctx_, plan_.params);
    ctx_.setup_done();
    sync();
    check_device("setup");
  }

  void first_call() {
    progress("first call", "");
    ctx_.entering("run()");
    const auto start = trace::now();
    plugin_->run(ctx_);
    sync();
    m_.first_call_ns = static_cast<double>(trace::now() - start);
    check_device("the first call");
  }

  // The first call's output against the plugin's reference; a wrong result fails the experiment.
  void verify() {
    progress("verify", "");
    ctx_.entering("verify()");
    plugin_->verify(ctx_);
    sync();
    check_device("verify");
    for (const auto& c : m_.correctness) {
      // 0 / 0: an empty output against an empty reference (a size or batch of 0) is no wrong result.
      if (std::isnan(c.relative_error))
        throw PhaseError(fmt::format("{}: the relative error is NaN, so the result cannot be checked: the output or its reference "
                                     "is empty or not finite (a parameter such as a size or batch of 0 leads to this)",
                                     c.what));
      if (!c.ok())
        throw PhaseError(fmt::format("{}: relative error {:.3g} exceeds the tolerance {:.3g}; the variant computes the wrong result",
                                     c.what, c.relative_error, c.tolerance));
    }
  }

  void warm_up() {
    progress("warm-up", fmt::format("{} iterations", plan_.iterations.warmup));
    ctx_.entering("run()");
    for (int i = 0; i < plan_.iterations.warmup; ++i) {
      stop_if_asked();
      plugin_->run(ctx_);
    }
    sync();
    check_device("warm-up");
  }

  // Host time of one call, with the device idle before each call so a full launch queue never
  // makes the host wait inside run().
  void time_host() {
    Sampler sampler(plan_.iterations);
    const auto start = trace::now();
    while (!sampler.done(seconds_since(start))) {
      stop_if_asked();
      sync();
      const auto t0 = trace::now();
      plugin_->run(ctx_);
      sampler.add(static_cast<double>(trace::now() - t0));
      if (sampler.count() % 64 == 0) progress("timing host", sampler_detail(sampler));
    }
    sync();
    check_device("host timing");
    m_.host = sampler.stats(seconds_since(start));
    m_.host->iterations = m_.host->count;
  }

  // Device time per iteration as nvbench's batch measurement takes it: one CUDA event before and
  // one after a batch of back-to-back calls, the sample being their mean. An event between every
  // call would add its own device time (3% of a 60 µs kernel on the H200). Each batch starts with
  // one unmeasured call, so the device already has work when the first event is reached and the
  // host's launch latency stays out.
  void time_device() {
    Sampler sampler(plan_.iterations);
    cuda::EventTimer events(2);
    std::size_t batch = 2, iterations = 0;
    const auto start = trace::now();
    while (!sampler.done(seconds_since(start))) {
      stop_if_asked();
      sync();
      plugin_->run(ctx_);
      events.reset();
      events.record();
      for (std::size_t i = 0; i < batch; ++i) plugin_->run(ctx_);
      events.record();
      const double per_iteration = events.elapsed().at(0) / static_cast<double>(batch);
      sampler.add(per_iteration);
      iterations += batch;
      // Batches of about 10 ms: long enough to hide the sync, short enough to stop on time.
      batch = std::clamp<std::size_t>(static_cast<std::size_t>(10e6 / std::max(per_iteration, 1000.0)), 1, 10000);
      progress("timing device", sampler_detail(sampler));
    }
    check_device("device timing");
    m_.device_time = sampler.stats(seconds_since(start));
    m_.device_time->iterations = iterations;
  }

  static std::string sampler_detail(const Sampler& s) { return fmt::format("{} samples", s.count()); }

  // Traces `calls` iterations (host ranges, framework ops, device activity) and saves the trace.
  // Returns when the device finished the last one.
  trace::Ns trace(const std::filesystem::path& file, int calls) {
    std::optional<cupti::Collector> collector;
    if (cuda_) {
      collector.emplace(trace_);
      if (!collector->start()) collector.reset();
    } else {
      trace_.collection.device_unavailable = "the experiment ran on the cpu";
    }
    trace_.collection.ops_traced = ctx_.has_hooks();
    ctx_.entering("run()");
    ctx_.start_hooks();
    for (int i = 0; i < calls; ++i) {
      recorder_.begin_iteration();
      plugin_->run(ctx_);
      recorder_.end_iteration();
      sync();  // iterations do not overlap on the device timeline
    }
    const auto device_done = trace::now();
    ctx_.stop_hooks();
    if (collector) collector->stop();
    check_device("tracing");
    trace_.process = static_cast<std::uint32_t>(::getpid());
    trace::link(trace_);
    trace::save(trace_, file);
    return device_done;
  }

  // The cold call traced: its run() as the host time, and with the device's work as the first
  // call, both with the cost of tracing in them.
  void cold_call(const std::filesystem::path& file) {
    progress("cold call", "traced");
    const auto device_done = trace(file, 1);
    const auto& call = trace_.iterations.at(0);
    const auto run_ns = static_cast<double>(call.end - call.start);
    m_.host = outcome::Stats{.count = 1, .samples = {run_ns}, .iterations = 1, .median = run_ns, .mean = run_ns, .min = run_ns,
                             .max = run_ns, .spread = 0, .seconds = run_ns * 1e-9, .converged = true};
    m_.first_call_ns = static_cast<double>(device_done - call.start);
    check_setup_rule();
  }

  void check_setup_rule() { m_.setup_warning = setup_rule_finding(trace_, ctx_.seen_in_setup()); }

  void teardown() {
    progress("teardown", "");
    ctx_.entering("teardown()");
    plugin_->teardown(ctx_);
    check_device("teardown");
  }

  const series::ExperimentPlan& plan_;
  Placement placement_;
  bool cuda_;
  const ExperimentEvents& events_;
  outcome::Measurement m_;
  trace::Trace trace_;
  trace::HostRecorder recorder_{trace_};
  WorkerContext ctx_;
  loader::PluginPtr plugin_;
};

}  // namespace

outcome::Measurement run_experiment(const series::ExperimentPlan& plan, const Placement& placement,
                                    const std::filesystem::path& trace_file, const ExperimentEvents& events) {
  return Session(plan, placement, events).measure(trace_file);
}

outcome::Measurement trace_cold_call(const series::ExperimentPlan& plan, const Placement& placement,
                                     const std::filesystem::path& trace_file, const ExperimentEvents& events) {
  return Session(plan, placement, events).trace_cold(trace_file);
}

void add_worker_marks(outcome::Measurement& m, const WorkerExit& exit) {
  m.timeline.insert(m.timeline.begin(), {"spawned", exit.spawned});
  m.timeline.push_back({"reaped", exit.reaped});
}

std::string setup_rule_finding(const trace::Trace& trace, const std::vector<std::string>& seen_in_setup) {
  if (trace.iterations.empty()) return "";
  // The outermost ops of one run(): those not inside another op.
  std::set<std::string> run_ops;
  for (const auto& r : trace.ranges) {
    if (r.kind != trace::RangeKind::op || r.iteration != 0) continue;
    if (r.parent == trace::none || trace.ranges[static_cast<std::size_t>(r.parent)].kind != trace::RangeKind::op)
      run_ops.insert(trace.strings[r.name]);
  }
  if (run_ops.empty()) return "";
  const std::set<std::string> setup_ops(seen_in_setup.begin(), seen_in_setup.end());
  std::string names;
  for (const auto& op : run_ops) {
    if (!setup_ops.count(op)) return "";
    names += (names.empty() ? "" : ", ") + op;
  }
  return fmt::format("setup() dispatched every framework op that run() dispatches ({}): setup ran the measured work, so the "
                     "first call was not cold (expr/plugin.hpp: setup must not run the measured work)",
                     names);
}

}  // namespace expr::runner
