// The parent's side of a run: placing experiments, starting their workers, collecting results.
#include "runner/series_runner.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "cupti/collector.hpp"
#include "device/cuda.hpp"
#include "outcome/measurement_json.hpp"
#include "runner/cold_trace.hpp"
#include "runner/context.hpp"
#include "runner/limits.hpp"
#include "runner/schedule.hpp"
#include "runner/worker.hpp"
#include "util/log.hpp"
#include "util/regex.hpp"

namespace expr::runner {

namespace fs = std::filesystem;

DeviceProbe probe_devices() {
  DeviceProbe probe;
  const auto log = fs::temp_directory_path() / fmt::format("expr-probe-{}.log", ::getpid());
  const auto exit = run_in_worker(
      [](Channel& channel) {
        const auto a = cuda::probe();
        nlohmann::json j{{"type", "result"}, {"devices", a.devices}, {"unavailable", a.reason}};
        // The run's environment block names the first device; each experiment records its own.
        std::map<std::string, std::string> environment;
        if (a.devices > 0) {
          environment = cuda::environment(0);
          environment["cupti_api"] = cupti::api_version();
        }
        j["environment"] = environment;
        channel.send(j);
      },
      {.name = "CUDA probe", .timeout_seconds = 30, .log_file = log});
  if (exit.result) {
    probe.devices = exit.result->at("devices");
    probe.unavailable = exit.result->at("unavailable");
    probe.environment = exit.result->at("environment").get<std::map<std::string, std::string>>();
  } else {
    probe.unavailable = "the CUDA probe " + exit.describe();
  }
  std::error_code ec;
  fs::remove(log, ec);
  return probe;
}

namespace {

bool supports(const series::ExperimentPlan& e, Device d) {
  const auto& devices = e.plugin->description().devices;
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

// The kind of device an experiment runs on, or the reason it cannot run.
std::variant<Device, std::string> choose_device(const series::ExperimentPlan& e, const DeviceProbe& probe,
                                                const std::optional<Device>& forced) {
  const bool has_cuda = probe.devices > 0;
  const auto choice = forced ? (*forced == Device::cuda ? series::DeviceChoice::cuda : series::DeviceChoice::cpu) : e.device;
  switch (choice) {
    case series::DeviceChoice::cuda:
      if (!supports(e, Device::cuda)) return fmt::format("plugin {} does not run on cuda", e.plugin->description().name);
      if (!has_cuda) return fmt::format("needs cuda: {}", probe.unavailable);
      return Device::cuda;
    case series::DeviceChoice::cpu:
      if (!supports(e, Device::cpu)) return fmt::format("plugin {} does not run on the cpu", e.plugin->description().name);
      return Device::cpu;
    case series::DeviceChoice::auto_:
      if (has_cuda && supports(e, Device::cuda)) return Device::cuda;
      if (supports(e, Device::cpu)) return Device::cpu;
      return fmt::format("plugin {} runs only on cuda: {}", e.plugin->description().name, probe.unavailable);
  }
  return std::string("no device");
}

outcome::Measurement skipped(const series::ExperimentPlan& e, std::string reason) {
  outcome::Measurement m;
  m.experiment = e.name;
  m.plugin = e.plugin->description().name;
  m.params = e.params.values();
  m.iterations = e.iterations;
  m.status = outcome::Status::skipped;
  m.reason = std::move(reason);
  return m;
}

// The worker's job: one experiment, its events sent up the channel as they happen.
void experiment_job(Channel& channel, const series::ExperimentPlan& e, const Placement& placement, const ExperimentFiles& files) {
  ExperimentEvents events{
      [&](std::string_view phase, std::string_view detail) {
        channel.send({{"type", "progress"}, {"phase", phase}, {"detail", detail}});
      },
      // The plugin's ctx.log lines: the worker's log, and the parent's under the experiment's name.
      [](LogLevel level, std::string_view message) { log::write(log_level(level), message); }};
  auto j = outcome::to_json(run_experiment(e, placement, files.trace, events));
  j["type"] = "result";
  channel.send(j);
}

// What the parent knows of an experiment once its worker is gone: the worker's own result, or why
// there is none.
// `interrupts`: how many interrupts the run had acted on when the worker ended.
outcome::Measurement conclude(const series::ExperimentPlan& e, const Placement& placement, const ExperimentFiles& files,
                              const WorkerExit& exit, const std::string& last_phase, const std::string& error, int interrupts) {
  outcome::Measurement m;
  if (exit.result) {
    m = outcome::measurement_from_json(*exit.result);
  } else {
    m = skipped(e, "");
    m.device = placement.device;
    if (exit.how == WorkerExit::How::timed_out) {
      m.status = outcome::Status::timed_out;
      m.reason = fmt::format("no result after the {} s timeout (last phase: {})", e.timeout, last_phase);
    } else if (exit.how == WorkerExit::How::stopped) {
      m.status = outcome::Status::interrupted;
      m.reason = interrupts >= 2 ? fmt::format("killed during {}: the run was interrupted a second time", last_phase)
                                 : fmt::format("killed during {} when the run was interrupted: it did not stop within {} s", last_phase,
                                               stop_grace.count());
    } else {
      m.status = outcome::Status::crashed;
      m.reason = fmt::format("the worker {} during {}{}", exit.describe(), last_phase, error.empty() ? "" : ": " + error);
    }
    if (const auto log_tail = tail(files.log, 5); !log_tail.empty()) m.reason += "; worker.log ends with:\n" + log_tail;
  }
  if (fs::exists(files.trace)) m.trace = outcome::TraceSource(files.trace);
  add_worker_marks(m, exit);
  return m;
}

// In a worker, before anything starts CUDA: it sees only GPU `gpu`, as its device 0, so that a
// plugin cannot touch a neighbour's GPU. When expr itself was given CUDA_VISIBLE_DEVICES (a Slurm
// task's GPUs), `gpu` counts within that list.
void pin_worker(int gpu) {
  std::string visible = std::to_string(gpu);
  if (const char* given = std::getenv("CUDA_VISIBLE_DEVICES"); given && *given) {
    std::vector<std::string> listed;
    std::stringstream list(given);
    for (std::string item; std::getline(list, item, ',');) listed.push_back(item);
    if (static_cast<std::size_t>(gpu) < listed.size()) visible = listed[static_cast<std::size_t>(gpu)];
  }
  ::setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
}

// One experiment in flight.
struct Running {
  std::string last_phase = "start";
  std::string error;
  bool memory_exhausted = false;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  // The experiment's wall time in its workers so far, as the parent sees it.
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
};

}  // namespace

void run_series(const series::Plan& plan, const DeviceProbe& probe, const RunOptions& options, RunObserver& observer) {
  std::optional<util::Regex> filter;
  if (options.filter) filter.emplace(*options.filter);
  // What runs, on which kind of device; the rest is skipped at once, with the reason.
  std::vector<Job> jobs;
  std::vector<Device> devices(plan.experiments.size(), Device::cpu);
  for (std::size_t i = 0; i < plan.experiments.size(); ++i) {
    const auto& e = plan.experiments[i];
    if (filter && !filter->search(e.name)) {
      observer.finished(skipped(e, "filtered out by --filter"));
      continue;
    }
    const auto device = choose_device(e, probe, options.device);
    if (const auto* why = std::get_if<std::string>(&device)) {
      observer.finished(skipped(e, *why));
      continue;
    }
    devices[i] = std::get<Device>(device);
    jobs.push_back({i, options.expected_seconds.empty() ? 0.0 : options.expected_seconds.at(i)});
  }
  // One slot per GPU in use; serially, one slot, CUDA experiments on device 0 as the series asks.
  const std::size_t slots = options.gpus.empty() ? std::max<std::size_t>(options.workers, 1) : options.gpus.size();
  Schedule schedule(slots, std::move(jobs));
  WorkerPool pool;
  std::map<std::string, Running> running;
  int interrupts_seen = 0;  // acted on so far: the first stops the workers, the second kills them
  while (schedule.waiting() || pool.running() > 0) {
    if (options.interrupts) {
      options.interrupts->drain();
      const int now = std::min(options.interrupts->count(), 2);
      if (now > interrupts_seen) {
        if (now == 1) pool.stop_all(stop_grace);
        else pool.kill_all();
        interrupts_seen = now;
      }
    }
    if (interrupts_seen > 0)
      for (const auto& job : schedule.take_waiting()) {
        auto m = skipped(plan.experiments[job.experiment], "not started: the run was interrupted");
        m.status = outcome::Status::interrupted;
        observer.finished(std::move(m));
      }
    while (const auto start = schedule.next()) {
      const auto& e = plan.experiments[start->job.experiment];
      const auto slot = start->slot;
      const auto device = devices[start->job.experiment];
      // With --gpus, a CUDA experiment's worker sees only its slot's GPU, as its device 0; the run
      // names that GPU as it was given.
      const int pinned = device == Device::cuda && !options.gpus.empty() ? options.gpus[slot] : -1;
      const Placement placement{device, std::max(pinned, 0)};
      const Placement in_worker{device, 0};
      const auto files = options.files(e.name);
      auto& state = running[e.name];
      observer.started(e, placement);
      // Progress and logs of the experiment's workers, as they arrive.
      const auto listen = [&observer, &state, &e](const nlohmann::json& message) {
        const auto type = message.value("type", "");
        if (type == "progress") {
          state.last_phase = message.value("phase", "");
          observer.progress(e.name, state.last_phase, message.value("detail", ""));
        } else if (type == "error") {
          state.error = message.value("message", "");
        } else if (is_memory_exhausted(message)) {
          state.memory_exhausted = true;
        }
      };
      // Which GPU the experiment ran on goes with the GPU's own facts.
      const auto record_gpu = [placement](outcome::Measurement& m) {
        if (placement.device == Device::cuda) m.environment["gpu_index"] = std::to_string(placement.index);
      };
      pool.start(
          [&e, in_worker, files, pinned](Channel& channel) {
            if (pinned >= 0) pin_worker(pinned);
            experiment_job(channel, e, in_worker, files);
          },
          {e.name, e.timeout, files.log, listen, [&, listen, record_gpu, in_worker, pinned, files, slot](WorkerExit exit) {
             auto m = conclude(e, in_worker, files, exit, state.last_phase, state.error, interrupts_seen);
             record_gpu(m);
             // Running out of memory shows as whatever the plugin made of it; the limit is the reason.
             if (state.memory_exhausted && m.status != outcome::Status::ok)
               m.reason = fmt::format("{} ({})", memory_limit_exceeded(*e.memory), m.reason);
             m.wall_seconds = state.seconds();
             if (m.status != outcome::Status::ok || !e.trace_cold_call || interrupts_seen > 0) {
               if (m.status == outcome::Status::ok && e.trace_cold_call) {
                 auto cold = skipped(e, "not traced: the run was interrupted");
                 cold.status = outcome::Status::interrupted;
                 m.cold = std::make_shared<const outcome::Measurement>(std::move(cold));
               }
               running.erase(e.name);
               schedule.done(slot);
               observer.finished(std::move(m));
               return;
             }
             // The cold call traced in a fresh worker, in the same slot: the experiment
             // finishes when that worker does.
             state.error.clear();
             pool.start(
                 [&e, in_worker, files, pinned](Channel& channel) {
                   if (pinned >= 0) pin_worker(pinned);
                   cold_trace_job(channel, e, in_worker, files);
                 },
                 {e.name + " (cold trace)", e.timeout, files.cold_log, listen,
                  [&, record_gpu, in_worker, files, slot, measured = std::move(m)](WorkerExit cold_exit) mutable {
                    auto cold = conclude_cold_trace(e, in_worker, files, cold_exit, running.at(e.name).error);
                    record_gpu(cold);
                    measured.cold = std::make_shared<const outcome::Measurement>(std::move(cold));
                    measured.wall_seconds = running.at(e.name).seconds();
                    running.erase(e.name);
                    schedule.done(slot);
                    observer.finished(std::move(measured));
                  },
                  e.memory});
           },
           e.memory});
    }
    pool.wait(options.interrupts ? options.interrupts->wake_fd() : -1);
  }
}

}  // namespace expr::runner
