// Preparing a run: new, or taken up again from its run directory.
#include "session/prepared_run.hpp"

#include <fmt/format.h>

#include <map>

#include "report/resume.hpp"
#include "session/places.hpp"
#include "session/shard_plan.hpp"
#include "session/status.hpp"
#include "util/regex.hpp"

namespace expr::session {

namespace fs = std::filesystem;

PreparedRun resume_from(report::RunResult earlier, LoadedSeries loaded, const fs::path& dir, const std::string& series_file) {
  PreparedRun p;
  auto& run = p.run;
  run.id = earlier.id;
  run.revision = earlier.revision;
  run.series = loaded.plan.name;
  run.series_file = series_file.empty() ? earlier.series_file : series_file;
  run.description = loaded.plan.description;
  run.planned = loaded.plan.experiments.size();
  run.shard = loaded.shard;
  run.run_dir = dir;
  run.started = earlier.started;
  run.resumed = earlier.resumed;
  run.resumed.push_back(report::utc_now());
  run.environment = earlier.environment;
  const auto& points = loaded.plan.experiments;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < points.size(); ++i) index[points[i].name] = i;
  for (auto& e : earlier.experiments) {
    if (!report::has_result(e.measurement)) continue;
    const auto at = index.at(e.measurement.experiment);
    p.restored.push_back({std::move(e.measurement), std::move(loaded.guesses.at(at)), points[at].family, points[at].point});
    index.erase(points[at].name);
  }
  for (const auto& e : points)
    if (index.count(e.name)) p.left.push_back(e.name);
  p.loaded = std::move(loaded);
  return p;
}

namespace {

// `expr run --resume RUN_DIR [SERIES]`: the run's own request again, its finished points kept.
PreparedRun prepare_resume(const RunArgs& args, std::unique_ptr<history::Store> store) {
  const report::RunDirectory dir(*args.resume);
  // A directory that is not there has no run to resume, which reading it says.
  std::optional<report::RunLock> lock;
  if (!args.dry_run && fs::is_directory(dir.root()))
    lock = or_stop(Status::cannot_write, [&] { return dir.lock_for_resume(); }, "cannot resume: ");
  const auto context = fmt::format("cannot resume {}: ", dir.root().string());
  const auto recorded = or_stop(Status::bad_input, [&] { return dir.read_plan(); }, context);
  auto earlier = or_stop(Status::bad_input, [&] { return dir.read(); }, context);
  auto request = recorded.request;
  if (!args.series.empty()) request.series = fs::absolute(args.series);
  auto loaded = load_request(request.series, request, store.get(), earlier.shard ? &*earlier.shard : nullptr);
  if (const auto changes = report::changed_points(recorded, earlier, loaded.plan); changes.points > 0) {
    std::vector<Stop::Line> lines;
    for (const auto& problem : changes.problems) lines.push_back({false, problem.str()});
    lines.push_back({true, fmt::format("cannot resume {}: the series {} changed {} finished point{}; resuming would mix results of two "
                                       "different series in one run. Nothing ran. Restore the series, or start a new run.",
                                       dir.root().string(), request.series.string(), changes.points, changes.points == 1 ? "" : "s")});
    throw Stop(Status::bad_input, std::move(lines));
  }
  auto p = resume_from(std::move(earlier), std::move(loaded), dir.root(), args.series.empty() ? "" : args.series.string());
  p.store = std::move(store);
  p.request = std::move(request);
  p.lock = std::move(lock);
  if (!args.dry_run) p.dir = dir;
  return p;
}

}  // namespace

PreparedRun prepare_run(const RunArgs& args) {
  std::unique_ptr<history::Store> store;
  const auto history_file = args.history.value_or(default_history());
  if (!args.no_history && (!args.dry_run || fs::exists(history_file))) {
    try {
      store = open_history(history_file);
    } catch (const std::exception& e) {
      throw Stop(Status::cannot_write, fmt::format("{}\n(--history PATH records elsewhere, --no-history not at all)", e.what()));
    }
  }
  if (args.resume) return prepare_resume(args, std::move(store));
  PreparedRun p;
  p.request = {fs::absolute(args.series), args.axes, args.filter, args.device, args.shard, args.rounds};
  p.loaded = load_request(args.series, p.request, store.get(), nullptr);
  p.store = std::move(store);
  for (const auto& e : p.loaded.plan.experiments) p.left.push_back(e.name);
  if (args.dry_run) return p;
  if (args.filter)
    or_stop(Status::bad_input, [&] { util::Regex check(*args.filter); }, fmt::format("--filter '{}' is not a valid regex: ", *args.filter));
  p.dir.emplace(args.out.value_or(default_run_dir(p.loaded.plan.name)));
  return p;
}

}  // namespace expr::session
