// The cold call traced in a second worker: see cold_trace.hpp.
#include "runner/cold_trace.hpp"

#include <fmt/format.h>

#include "outcome/measurement_json.hpp"
#include "runner/context.hpp"
#include "runner/series_runner.hpp"
#include "util/log.hpp"

namespace expr::runner {

namespace fs = std::filesystem;

void cold_trace_job(Channel& channel, const series::ExperimentPlan& experiment, const Placement& placement, const ExperimentFiles& files,
                    const fs::path& shared) {
  std::error_code ec;
  fs::remove(files.cold_trace, ec);  // a trace left by an earlier run into this directory is not this one's
  ExperimentEvents events{[&](std::string_view phase, std::string_view detail) {
                            channel.send({{"type", "progress"}, {"phase", fmt::format("cold trace: {}", phase)}, {"detail", detail}});
                          },
                          // The measuring worker already passed the plugin's messages on; these
                          // repeats go only to the cold worker's log.
                          [](LogLevel level, std::string_view message) { log::write_local(log_level(level), message); }};
  auto j = outcome::to_json(trace_cold_call(experiment, placement, shared, files.cold_trace, events));
  j["type"] = "result";
  channel.send(j);
}

outcome::Measurement conclude_cold_trace(const series::ExperimentPlan& experiment, const Placement& placement,
                                         const ExperimentFiles& files, const WorkerExit& exit, const std::string& error) {
  outcome::Measurement cold;
  if (exit.result) {
    cold = outcome::measurement_from_json(*exit.result);
  } else {
    cold.experiment = experiment.name;
    cold.plugin = experiment.plugin->description().name;
    cold.device = placement.device;
    cold.status = status_without_result(exit);
    cold.reason = exit.describe() + (error.empty() ? "" : ": " + error);
    if (const auto log_tail = tail(files.cold_log, 5); !log_tail.empty()) cold.reason += "; its log ends with:\n" + log_tail;
  }
  if (fs::exists(files.cold_trace)) cold.trace = outcome::TraceSource(files.cold_trace);
  add_worker_marks(cold, exit);
  return cold;
}

}  // namespace expr::runner
