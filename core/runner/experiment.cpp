// The phases of one experiment inside a worker process: see experiment.hpp.
#include "runner/experiment.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "cupti/collector.hpp"
#include "cupti/range_profiler.hpp"
#include "device/cuda.hpp"
#include "device/queue_hold.hpp"
#include "runner/context.hpp"
#include "runner/device_timing.hpp"
#include "runner/sampler.hpp"
#include "runner/worker.hpp"
#include "trace/clock.hpp"
#include "trace/counters.hpp"
#include "trace/trace_file.hpp"
#include "util/atomic_file.hpp"
#include "util/statistics.hpp"
#include "util/units.hpp"

namespace expr::runner {

namespace {

// How far gpu_time may stray from a lone kernel's traced duration (check_gpu_time): 3%, and more
// than the gap the device itself leaves between back-to-back kernels, which gpu_time holds and a
// lone traced kernel does not (0.5 to 2.3 µs for 10 to 35 µs SDPA kernels on the H200).
constexpr double gpu_time_tolerance = 0.03;
constexpr double launch_interval_ns = 2500;

double seconds_since(trace::Ns start) { return static_cast<double>(trace::now() - start) * 1e-9; }

// The worker's rank when a launcher started expr as one process of a distributed job (torchrun
// and PyTorch's env:// convention: RANK and WORLD_SIZE); none otherwise.
std::optional<trace::Distributed> distributed_from_environment() {
  const auto number = [](const char* name) -> std::optional<int> {
    const char* text = std::getenv(name);
    if (!text) return std::nullopt;
    int v = 0;
    const auto end = text + std::strlen(text);
    const auto [at, ec] = std::from_chars(text, end, v);
    if (ec != std::errc() || at != end) return std::nullopt;
    return v;
  };
  const auto rank = number("RANK"), world_size = number("WORLD_SIZE");
  if (!rank || !world_size || *rank < 0 || *rank >= *world_size) return std::nullopt;
  return trace::Distributed{*rank, *world_size};
}

// The device as device timing sees it: CUDA events on the legacy default stream, and the queue
// held by device/queue_hold.hpp's kernel.
class CudaClock final : public DeviceClock {
 public:
  void synchronize() override { cuda::synchronize(); }
  void hold(std::chrono::nanoseconds timeout) override { hold_.hold(timeout); }
  void release() override { hold_.release(); }
  bool hold_timed_out() override { return hold_.timed_out(); }
  void start() override {
    events_.reset();
    events_.record();
  }
  void stop() override { events_.record(); }
  double elapsed_ns() override { return events_.elapsed().at(0); }

 private:
  cuda::EventTimer events_{2};
  cuda::QueueHold hold_;
};

// Which counters a GPU exposes is asked once a run: the first worker that counts on it keeps CUPTI's
// image in the run's shared directory, named by the GPU's UUID, and the others read it there (the
// question takes about 0.12 s on an H100). No file without a shared directory or a UUID.
std::filesystem::path kept_availability(const std::string& shared, const std::map<std::string, std::string>& environment) {
  const auto uuid = environment.find("gpu_uuid");
  if (shared.empty() || uuid == environment.end()) return {};
  return std::filesystem::path(shared) / ("counter-availability-" + uuid->second);
}

std::vector<std::uint8_t> read_kept(const std::filesystem::path& file) {
  if (file.empty()) return {};
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void keep(const std::filesystem::path& file, const std::vector<std::uint8_t>& image) {
  if (file.empty() || image.empty()) return;
  try {
    util::write_atomically(file, std::string_view(reinterpret_cast<const char*>(image.data()), image.size()));
  } catch (const std::exception&) {
    // The next worker asks the device itself.
  }
}

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
  Session(const series::ExperimentPlan& plan, const Placement& placement, const std::filesystem::path& shared, const ExperimentEvents& events)
      : plan_(plan), placement_(placement), cuda_(placement.device == Device::cuda), events_(events),
        ctx_(placement.device, placement.index, shared.string(), recorder_, m_, events.log) {
    m_.experiment = plan.name;
    m_.plugin = plan.plugin->description().name;
    m_.params = plan.params.values();
    m_.iterations = plan.iterations;
    m_.device = placement.device;
    counters_not_taken();
    mark("worker");
  }

  outcome::Measurement measure(const std::filesystem::path& trace_file) {
    std::vector<Phase> phases{
        {"setup", [&] { prepare(); }},
        {"first call", [&] { first_call(); }},
        {"verify", [&] { verify(); }},
        {"quiet", [&] { quiet(); }},
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
           check_gpu_time();
         }},
    };
    // Only where it will measure: with counters off the worker's timeline has no such step.
    if (counters_wanted()) phases.push_back({"counters", [&] { count(trace_file); }});
    phases.push_back({"teardown", [&] { teardown(); }});
    return run_phases(phases);
  }

  // A later round: the same timing in a fresh process, nothing else measured. Its first call is
  // not timed (the first round timed the cold one).
  outcome::Measurement time_round() {
    return run_phases({
        {"setup", [&] { prepare(); }},
        {"first call",
         [&] {
           progress("first call", "not timed: the first round timed it");
           ctx_.entering("run()");
           plugin_->run(ctx_);
           sync();
           check_device("the first call");
         }},
        {"quiet", [&] { quiet(); }},
        {"warm-up", [&] { warm_up(); }},
        {"timing",
         [&] {
           time_host();
           if (cuda_) time_device();
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

  void quiet() {
    if (events_.quiet) events_.quiet();
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
    Sampler sampler(plan_.iterations.round_share());
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

  // gpu_time and loop_time (runner/device_timing.hpp), from the host time just taken: a held
  // batch must be enqueued well within the hold's timeout.
  void time_device() {
    CudaClock device;
    auto times = runner::time_device(device, [&] { plugin_->run(ctx_); }, plan_.iterations.round_share(), m_.host ? m_.host->median : 0,
                                     [&](const Sampler& gpu, const Sampler& loop) {
                                       stop_if_asked();
                                       progress("timing device", fmt::format("{} held, {} loop samples", gpu.count(), loop.count()));
                                     });
    check_device("device timing");
    m_.device_time = std::move(times.gpu);
    m_.loop_time = std::move(times.loop);
    m_.queue_not_held = std::move(times.queue_not_held);
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
    trace_.collection.ops_traced = ctx_.traces(TraceHook::Records::ops);
    trace_.collection.allocator_traced = ctx_.traces(TraceHook::Records::allocations);
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
    trace_.unix_offset = trace::unix_offset();
    trace_.distributed = distributed_from_environment();
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

  // Why the counters phase will not run, when that is known before it starts (the trace says so).
  void counters_not_taken() {
    auto& c = trace_.counters;
    if (!plan_.counters.on) {
      c.state = trace::CounterCollection::State::off;
      c.reason = "counters are off for this experiment (`counters: on` in the series turns them on)";
    } else if (!cuda_) {
      c.reason = "the experiment ran on the cpu, and hardware counters need a CUDA device";
    } else if (plan_.iterations.traced == 0) {
      c.reason = "no traced iteration to join the counters to (iterations: traced is 0)";
    } else {
      // What the trace saved by the tracing phase says until the counters phase replaces it.
      c.reason = "the counters phase did not finish: the experiment failed or was stopped before or during it";
    }
  }

  // The counters phase: one more iteration under CUPTI's range profiler (one per pass under
  // iteration replay), its values joined to the kernels of the last traced iteration. Never during
  // the timed runs, and never with the Activity API on. A refusal by CUPTI is recorded in the trace
  // as the reason, and the experiment goes on; a failure of the plugin's run() fails this phase.
  bool counters_wanted() const { return plan_.counters.on && cuda_ && plan_.iterations.traced > 0; }

  void count(const std::filesystem::path& trace_file) {
    auto& c = trace_.counters;
    const auto start = trace::now();
    const auto last = static_cast<std::int32_t>(trace_.iterations.size()) - 1;
    const auto unavailable = [&](std::string reason) {
      c.state = trace::CounterCollection::State::unavailable;
      c.reason = std::move(reason);
      for (auto& k : trace_.kernels) k.counters.clear();
    };
    if (!trace_.collection.device_traced || last < 0) {
      unavailable(fmt::format("device tracing was unavailable ({}), so there are no kernel records to join counters to",
                              trace_.collection.device_unavailable));
    } else {
      const auto kernels = trace::kernels_in_launch_order(trace_, last).size();
      c.replay = plan_.counters.replay;
      progress("counters", fmt::format("{} metrics over one iteration of {} kernels, {} replay", plan_.counters.metrics.size(), kernels,
                                       trace::to_string(c.replay)));
      try {
        c.metrics = plan_.counters.metrics;
        // Room for twice the traced iteration's launches: a join then fails with the real count.
        const auto kept = kept_availability(ctx_.shared_directory(), m_.environment);
        auto availability = read_kept(kept);
        const bool asked = availability.empty();
        cupti::RangeProfiler profiler(placement_.index, c.metrics, 2 * kernels + 16, c.replay, std::move(availability));
        if (asked) keep(kept, profiler.counter_availability());
        c.passes = profiler.passes();
        ctx_.entering("run()");
        const auto profile = profiler.profile([&] {
          plugin_->run(ctx_);
          sync();
        });
        if (profile.dropped_ranges > 0)
          unavailable(fmt::format("CUPTI dropped {} of the counters iteration's kernel ranges", profile.dropped_ranges));
        else if (auto problem = trace::join_counters(trace_, last, profile.ranges); !problem.empty())
          unavailable(std::move(problem));
        else {
          c.state = trace::CounterCollection::State::collected;
          c.reason.clear();  // the placeholder counters_not_taken left
        }
      } catch (const cupti::CountersUnavailable& e) {
        unavailable(e.what());
      }
    }
    c.wall = trace::now() - start;
    trace::save(trace_, trace_file);  // before anything can fail the phase: the traced iterations are kept
    check_device("counters");
  }

  // In an iteration of one kernel and nothing else on the device, gpu_time is that kernel's own
  // duration, which CUPTI's records give without any launch gap: where the two disagree beyond a
  // few percent the timing cannot be right, and the result says so rather than pass it silently.
  void check_gpu_time() {
    if (!m_.device_time || !trace_.collection.device_traced || trace_.iterations.empty()) return;
    std::vector<double> kernel_ns(trace_.iterations.size(), 0.0);
    std::vector<int> kernels(trace_.iterations.size(), 0);
    for (const auto& k : trace_.kernels)
      if (k.iteration >= 0) {
        kernel_ns[static_cast<std::size_t>(k.iteration)] += static_cast<double>(k.duration());
        ++kernels[static_cast<std::size_t>(k.iteration)];
      }
    const auto in_iteration = [](const auto& spans) {
      return std::any_of(spans.begin(), spans.end(), [](const auto& s) { return s.iteration >= 0; });
    };
    if (in_iteration(trace_.copies) || in_iteration(trace_.memsets) || std::any_of(kernels.begin(), kernels.end(), [](int n) { return n != 1; }))
      return;
    const double kernel = util::median(kernel_ns), gpu = m_.device_time->median;
    if (kernel > 0 && std::fabs(gpu / kernel - 1) > gpu_time_tolerance && std::fabs(gpu - kernel) > launch_interval_ns)
      m_.timing_warning = fmt::format("gpu_time {} is {:+.1f}% off the traced kernel's own duration {} in iterations of one kernel, more "
                                      "than the device's gap between back-to-back kernels explains: the device timing is suspect",
                                      util::format_duration(gpu), 100 * (gpu / kernel - 1), util::format_duration(kernel));
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

outcome::Measurement run_experiment(const series::ExperimentPlan& plan, const Placement& placement, const std::filesystem::path& shared,
                                    const std::filesystem::path& trace_file, const ExperimentEvents& events) {
  return Session(plan, placement, shared, events).measure(trace_file);
}

outcome::Measurement trace_cold_call(const series::ExperimentPlan& plan, const Placement& placement, const std::filesystem::path& shared,
                                     const std::filesystem::path& trace_file, const ExperimentEvents& events) {
  return Session(plan, placement, shared, events).trace_cold(trace_file);
}

outcome::Measurement time_round(const series::ExperimentPlan& plan, const Placement& placement, const std::filesystem::path& shared,
                                const ExperimentEvents& events) {
  return Session(plan, placement, shared, events).time_round();
}

outcome::Measurement with_timing_rounds(outcome::Measurement measured, const std::vector<outcome::Measurement>& later) {
  if (later.empty() || measured.status != outcome::Status::ok) return measured;
  std::vector<outcome::Stats> host, device, loop;
  const auto collect = [](std::vector<outcome::Stats>& figure, const std::optional<outcome::Stats>& round) {
    if (round) figure.push_back(*round);
  };
  collect(host, measured.host);
  collect(device, measured.device_time);
  collect(loop, measured.loop_time);
  for (std::size_t i = 0; i < later.size(); ++i) {
    const auto& round = later[i];
    if (round.status != outcome::Status::ok) {
      measured.reason += fmt::format("{}timing round {} of {} {}{}: its figures are left out", measured.reason.empty() ? "" : "; ", i + 2,
                                     measured.iterations.rounds, outcome::to_string(round.status),
                                     round.reason.empty() ? "" : " (" + round.reason + ")");
      continue;
    }
    collect(host, round.host);
    collect(device, round.device_time);
    collect(loop, round.loop_time);
    if (measured.queue_not_held.empty()) measured.queue_not_held = round.queue_not_held;
  }
  const auto combine = [](std::optional<outcome::Stats>& figure, const std::vector<outcome::Stats>& rounds) {
    if (figure) figure = combine_rounds(rounds);
  };
  combine(measured.host, host);
  combine(measured.device_time, device);
  combine(measured.loop_time, loop);
  return measured;
}

outcome::Status status_without_result(const WorkerExit& exit) {
  switch (exit.how) {
    case WorkerExit::How::timed_out: return outcome::Status::timed_out;
    case WorkerExit::How::stopped: return outcome::Status::interrupted;
    case WorkerExit::How::crashed:
    case WorkerExit::How::finished: break;
  }
  return outcome::Status::crashed;
}

void add_worker_marks(outcome::Measurement& m, const WorkerExit& exit) {
  m.timeline.insert(m.timeline.begin(), {"spawned", exit.spawned});
  m.timeline.push_back({"ended", exit.ended});
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
