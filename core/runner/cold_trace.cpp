// The cold call traced in a second worker: see cold_trace.hpp.
#include "runner/cold_trace.hpp"

#include <fmt/format.h>

#include <variant>

#include "runner/experiment.hpp"
#include "runner/measurement_json.hpp"
#include "runner/worker.hpp"

namespace expr::runner {

namespace fs = std::filesystem;

namespace {

bool reads_cold(const expect::Node& n) {
  return std::visit(
      [](const auto& e) -> bool {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, expect::Reference>) return e.call.cold;
        else if constexpr (std::is_same_v<E, expect::Negation>) return reads_cold(*e.operand);
        else if constexpr (std::is_same_v<E, expect::Arithmetic>) return reads_cold(*e.lhs) || reads_cold(*e.rhs);
        else return false;
      },
      n.expr);
}

}  // namespace

bool reads_cold_trace(const series::ExperimentPlan& experiment) {
  for (const auto& x : experiment.expectations)
    if (reads_cold(*x.check.observed) || reads_cold(*x.check.guessed)) return true;
  return false;
}

Measurement run_cold_trace(const series::ExperimentPlan& experiment, Device device, const fs::path& run_dir,
                           RunObserver& observer) {
  const auto dir = experiment_dir(run_dir, experiment.name);
  fs::create_directories(dir);
  const auto trace_file = dir / "cold_trace.json";
  const auto log_file = dir / "cold_worker.log";
  std::error_code ec;
  fs::remove(trace_file, ec);  // a trace left by an earlier run into this directory is not this one's

  std::string error;
  const auto exit = run_in_worker(
      [&](Channel& channel) {
        ExperimentEvents events{[&](std::string_view phase, std::string_view detail) {
                                  channel.send({{"type", "progress"}, {"phase", phase}, {"detail", detail}});
                                },
                                // The measuring worker already passed the plugin's messages on;
                                // these repeats go only to cold_worker.log.
                                [](LogLevel, std::string_view message) { fmt::print(stderr, "{}\n", message); }};
        auto j = to_json(trace_cold_call(experiment, device, trace_file, events));
        j["type"] = "result";
        channel.send(j);
      },
      {experiment.timeout, log_file, [&](const nlohmann::json& message) {
         const auto type = message.value("type", "");
         if (type == "progress")
           observer.progress(fmt::format("cold trace: {}", message.value("phase", "")), message.value("detail", ""));
         else if (type == "error")
           error = message.value("message", "");
       }});

  Measurement cold;
  if (exit.result) {
    cold = measurement_from_json(*exit.result);
  } else {
    cold.experiment = experiment.name;
    cold.plugin = experiment.plugin->description().name;
    cold.device = device;
    cold.status = exit.how == WorkerExit::How::timed_out ? Status::timed_out : Status::crashed;
    cold.reason = exit.describe() + (error.empty() ? "" : ": " + error);
    if (const auto log_tail = tail(log_file, 5); !log_tail.empty()) cold.reason += "; cold_worker.log ends with:\n" + log_tail;
  }
  cold.trace_file = fs::exists(trace_file) ? fs::relative(trace_file, run_dir).string() : "";
  try {
    load_traces(cold, run_dir);
  } catch (const std::exception& e) {
    cold.status = Status::failed;
    cold.reason = fmt::format("its trace is unreadable: {}", e.what());
  }
  return cold;
}

Measurement with_cold_trace(Measurement measured, const series::ExperimentPlan& experiment, const fs::path& run_dir,
                            RunObserver& observer) {
  if (measured.status != Status::ok || !reads_cold_trace(experiment)) return measured;
  measured.cold = std::make_shared<Measurement>(run_cold_trace(experiment, measured.device, run_dir, observer));
  return measured;
}

}  // namespace expr::runner
