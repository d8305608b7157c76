#include "runner/experiment.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "cupti/collector.hpp"
#include "device/cuda.hpp"
#include "runner/context.hpp"
#include "runner/sampler.hpp"
#include "trace/clock.hpp"
#include "trace/trace_file.hpp"

namespace expr::runner {

namespace {

double seconds_since(trace::Ns start) { return static_cast<double>(trace::now() - start) * 1e-9; }

// A failure inside one phase; the phase name goes in front of the reason.
struct PhaseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
  }

  outcome::Measurement run(const std::filesystem::path& trace_file) {
    std::string phase = "setup";
    try {
      prepare(phase);
      phase = "first call";
      first_call();
      phase = "warm-up";
      warm_up();
      phase = "timing";
      time_host();
      if (cuda_) time_device();
      phase = "tracing";
      if (plan_.iterations.traced > 0) trace(trace_file);
      phase = "teardown";
      progress("teardown", "");
      plugin_->teardown(ctx_);
      check_device("teardown");
      m_.status = outcome::Status::ok;
    } catch (const std::exception& e) {
      m_.status = outcome::Status::failed;
      m_.reason = fmt::format("{}: {}", phase, e.what());
    } catch (...) {
      m_.status = outcome::Status::failed;
      m_.reason = phase + ": an exception that is not a std::exception";
    }
    return std::move(m_);
  }

 private:
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

  void prepare(std::string& phase) {
    progress("setup", "");
    if (cuda_) {
      cuda::select(placement_.index);
      m_.environment = cuda::environment(placement_.index);
      trace_.devices.push_back(cuda::properties(placement_.index));
    }
    plugin_ = plan_.plugin->create();
    m_.work = plugin_->work(plan_.params);
    plugin_->setup(ctx_, plan_.params);
    sync();
    check_device("setup");
    phase = "correctness";
    for (const auto& c : m_.correctness)
      if (!c.ok())
        throw PhaseError(fmt::format("{}: relative error {:.3g} exceeds the tolerance {:.3g}; the variant computes the wrong result",
                                     c.what, c.relative_error, c.tolerance));
  }

  void first_call() {
    progress("first call", "");
    const auto start = trace::now();
    plugin_->run(ctx_);
    sync();
    m_.first_call_ns = static_cast<double>(trace::now() - start);
    check_device("the first call");
  }

  void warm_up() {
    progress("warm-up", fmt::format("{} iterations", plan_.iterations.warmup));
    for (int i = 0; i < plan_.iterations.warmup; ++i) plugin_->run(ctx_);
    sync();
    check_device("warm-up");
  }

  // Host time of one call, with the device idle before each call so a full launch queue never
  // makes the host wait inside run().
  void time_host() {
    Sampler sampler(plan_.iterations);
    const auto start = trace::now();
    while (!sampler.done(seconds_since(start))) {
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

  void trace(const std::filesystem::path& file) {
    progress("tracing", fmt::format("{} iterations", plan_.iterations.traced));
    std::optional<cupti::Collector> collector;
    if (cuda_) {
      collector.emplace(trace_);
      if (!collector->start()) collector.reset();
    } else {
      trace_.collection.device_unavailable = "the experiment ran on the cpu";
    }
    trace_.collection.ops_traced = ctx_.has_hooks();
    ctx_.start_hooks();
    for (int i = 0; i < plan_.iterations.traced; ++i) {
      recorder_.begin_iteration();
      plugin_->run(ctx_);
      recorder_.end_iteration();
      sync();  // iterations do not overlap on the device timeline
    }
    ctx_.stop_hooks();
    if (collector) collector->stop();
    check_device("tracing");
    trace_.process = static_cast<std::uint32_t>(::getpid());
    trace::link(trace_);
    trace::save(trace_, file);
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
  return Session(plan, placement, events).run(trace_file);
}

}  // namespace expr::runner
