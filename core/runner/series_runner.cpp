#include "runner/series_runner.hpp"

#include <fmt/format.h>

#include <regex>

#include "device/cuda.hpp"
#include "runner/experiment.hpp"
#include "runner/limits.hpp"
#include "runner/measurement_json.hpp"
#include "runner/worker.hpp"
#include "trace/trace_file.hpp"

namespace expr::runner {

namespace fs = std::filesystem;

DeviceProbe probe_devices() {
  DeviceProbe probe;
  const auto log = fs::temp_directory_path() / fmt::format("expr-probe-{}.log", ::getpid());
  const auto exit = run_in_worker(
      [](Channel& channel) {
        const auto a = cuda::probe();
        nlohmann::json j{{"type", "result"}, {"devices", a.devices}, {"unavailable", a.reason}};
        j["environment"] = a.devices > 0 ? cuda::environment(0) : std::map<std::string, std::string>{};
        channel.send(j);
      },
      {30, log, nullptr, std::nullopt});
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

fs::path experiment_dir(const fs::path& run_dir, const std::string& experiment) { return run_dir / "experiments" / experiment; }

namespace {

bool supports(const series::ExperimentPlan& e, Device d) {
  const auto& devices = e.plugin->description().devices;
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

// The device an experiment runs on, or the reason it cannot run.
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

Measurement skipped(const series::ExperimentPlan& e, std::string reason) {
  Measurement m;
  m.experiment = e.name;
  m.plugin = e.plugin->description().name;
  m.params = e.params.values();
  m.iterations = e.iterations;
  m.status = Status::skipped;
  m.reason = std::move(reason);
  return m;
}

LogLevel level_from(const std::string& s) {
  if (s == "debug") return LogLevel::debug;
  if (s == "warning") return LogLevel::warning;
  if (s == "error") return LogLevel::error;
  return LogLevel::info;
}

std::string_view level_name(LogLevel l) {
  switch (l) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warning: return "warning";
    case LogLevel::error: return "error";
  }
  return "info";
}

Measurement run_isolated(const series::ExperimentPlan& e, Device device, const fs::path& run_dir, RunObserver& observer) {
  const auto dir = experiment_dir(run_dir, e.name);
  fs::create_directories(dir);
  const auto trace_file = dir / "expr_trace.json";
  const auto log_file = dir / "worker.log";
  std::string last_phase = "start";
  std::string error;
  bool memory_exhausted = false;

  const auto exit = run_in_worker(
      [&](Channel& channel) {
        ExperimentEvents events{
            [&](std::string_view phase, std::string_view detail) {
              channel.send({{"type", "progress"}, {"phase", phase}, {"detail", detail}});
            },
            [&](LogLevel level, std::string_view message) {
              channel.send({{"type", "log"}, {"level", level_name(level)}, {"message", message}});
            }};
        const auto m = run_experiment(e, device, trace_file, events);
        auto j = to_json(m);
        j["type"] = "result";
        channel.send(j);
      },
      {e.timeout, log_file, [&](const nlohmann::json& message) {
         const auto type = message.value("type", "");
         if (type == "progress") {
           last_phase = message.value("phase", "");
           observer.progress(last_phase, message.value("detail", ""));
         } else if (type == "log") {
           observer.log(e.name, level_from(message.value("level", "info")), message.value("message", ""));
         } else if (type == "error") {
           error = message.value("message", "");
         } else if (is_memory_exhausted(message)) {
           memory_exhausted = true;
         }
       },
       e.memory});

  Measurement m;
  if (exit.result) {
    m = measurement_from_json(*exit.result);
  } else {
    m = skipped(e, "");
    m.device = device;
    const auto log_tail = tail(log_file, 5);
    if (exit.how == WorkerExit::How::timed_out) {
      m.status = Status::timed_out;
      m.reason = fmt::format("no result after the {} s timeout (last phase: {})", e.timeout, last_phase);
    } else {
      m.status = Status::crashed;
      m.reason = fmt::format("the worker {} during {}{}", exit.describe(), last_phase, error.empty() ? "" : ": " + error);
    }
    if (!log_tail.empty()) m.reason += "; worker.log ends with:\n" + log_tail;
  }
  // Running out of memory shows as whatever the plugin made of it; the limit is the reason.
  if (memory_exhausted && m.status != Status::ok) m.reason = fmt::format("{} ({})", memory_limit_exceeded(*e.memory), m.reason);
  // The trace file is kept relative to the run directory, so the directory can move.
  if (fs::exists(trace_file)) {
    m.trace_file = fs::relative(trace_file, run_dir).string();
    try {
      m.trace = std::make_shared<trace::Trace>(trace::load(trace_file));
    } catch (const std::exception& ex) {
      m.reason += (m.reason.empty() ? "" : "; ") + std::string("trace unreadable: ") + ex.what();
    }
  } else {
    m.trace_file.clear();
  }
  return m;
}

}  // namespace

void run_series(const series::Plan& plan, const DeviceProbe& probe, const RunOptions& options, RunObserver& observer) {
  std::optional<std::regex> filter;
  if (options.filter) filter.emplace(*options.filter, std::regex::ECMAScript);
  const auto total = plan.experiments.size();
  for (std::size_t i = 0; i < total; ++i) {
    const auto& e = plan.experiments[i];
    observer.started(e, i, total);
    if (filter && !std::regex_search(e.name, *filter)) {
      observer.finished(skipped(e, "filtered out by --filter"));
      continue;
    }
    const auto device = choose_device(e, probe, options.device);
    if (const auto* why = std::get_if<std::string>(&device)) {
      observer.finished(skipped(e, *why));
      continue;
    }
    observer.finished(run_isolated(e, std::get<Device>(device), options.run_dir, observer));
  }
}

}  // namespace expr::runner
