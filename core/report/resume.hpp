// Resuming a run that stopped before its end (kill -9 of expr, Ctrl-C, a reboot): which points of a
// run directory count as finished, and whether the series still plans them as they ran.
//
// A point's settings are everything that decides what it measures: its plugin, every parameter's
// value, the device it may run on (after --device), the iterations, the timeout, the memory limit,
// and whether its cold call is traced. plan.json (report/run_directory.hpp) keeps them for every
// planned point. `expr run --resume` plans the series again with the same request; each finished
// point must still be planned, under the same identity and with the same settings, or the run is
// refused. What may change: guesses (judged again, over every point, from the series as it is now),
// descriptions, and points not finished yet (added, removed or changed).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/run_directory.hpp"
#include "series/plan.hpp"
#include "util/source.hpp"

namespace expr::report {

// A point's settings as plan.json keeps them; `device` is the run's --device, if any.
nlohmann::json point_settings(const series::ExperimentPlan& point, const std::optional<std::string>& device);
RunPlan run_plan(const RunRequest& request, const series::Plan& plan);

// A recorded experiment that ran to a result: ok, failed, crashed or timed out. A failure is a
// result like any other and is kept; a skipped point (filtered out, no device) is decided again and
// an interrupted one (Ctrl-C, SIGTERM) runs again.
bool has_result(const outcome::Measurement& m);

// The finished points of `run` that `plan` drops or would run with other settings than `recorded`
// says they ran with: how many, and the problems, at the series file's place of their experiment
// (points changed the same way at the same place share one).
struct Changes {
  std::size_t points = 0;
  std::vector<util::Problem> problems;
};
Changes changed_points(const RunPlan& recorded, const RunResult& run, const series::Plan& plan);

}  // namespace expr::report
