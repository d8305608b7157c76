// `expr run`: read and check the series, then run it, the outputs (report/sinks.hpp) hearing of
// each experiment as it ends; or take up a run that stopped before its end (`--resume`).
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <regex>

#include "cli/commands.hpp"
#include "report/assembler.hpp"
#include "report/run_directory.hpp"
#include "report/resume.hpp"
#include "report/sinks.hpp"
#include "runner/series_runner.hpp"
#include "series/shard.hpp"
#include "util/atomic_file.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

namespace {

// Hands what the runner says to the assembler (finished experiments) and the sinks (the rest).
class Observer final : public runner::RunObserver {
 public:
  Observer(LoadedSeries& series, report::RunResult& run, report::Assembler& assembler, report::Sink& sink)
      : series_(series), run_(run), assembler_(assembler), sink_(sink) {}

  void started(const series::ExperimentPlan& e, const runner::Placement& placement) override { sink_.started(e.name, placement); }
  void progress(const std::string& experiment, std::string_view phase, std::string_view detail) override {
    sink_.progress(experiment, phase, detail);
  }
  void log(const std::string& experiment, LogLevel level, std::string_view message) override { sink_.log(experiment, level, message); }

  void finished(outcome::Measurement m) override {
    // Environment facts the workers found (the GPU's, the plugin's libraries) join the run's.
    for (const auto& [k, v] : m.environment) run_.environment.try_emplace(k, v);
    const auto& experiments = series_.plan.experiments;
    const auto at = static_cast<std::size_t>(
        std::find_if(experiments.begin(), experiments.end(), [&](const auto& e) { return e.name == m.experiment; }) - experiments.begin());
    const auto& planned = experiments.at(at);
    assembler_.add({std::move(m), std::move(series_.guesses.at(at)), planned.family, planned.point});  // each experiment finishes once
  }

 private:
  LoadedSeries& series_;
  report::RunResult& run_;
  report::Assembler& assembler_;
  report::Sink& sink_;
};


// The series file as it is run, and plan.json: what a resumed run repeats and is checked against.
// Throws std::runtime_error.
void record_request(const report::RunDirectory& dir, const report::RunRequest& request, const series::Plan& plan) {
  std::ifstream series_text(request.series);
  util::write_atomically(dir.series_copy(), std::string(std::istreambuf_iterator<char>(series_text), {}));
  dir.write_plan(report::run_plan(request, plan));
}

// The points of the series the assembler must know although they do not run here: every planned
// point (guesses naming a family resolve against them), and the shard of those another shard runs.
struct Scope {
  std::vector<report::PlannedPoint> planned;
  std::map<std::string, std::string> elsewhere;
  std::optional<report::ShardRecord> shard;  // for results.json
};

// With request.shard ("K/N"), keeps in `loaded` only the points of that shard and records which
// shard it is, the series fingerprint and the whole plan with each point's shard. Throws
// std::invalid_argument for a malformed shard.
Scope take_shard(LoadedSeries& loaded, const report::RunRequest& request) {
  Scope scope;
  for (const auto& e : loaded.plan.experiments) scope.planned.push_back({e.name, e.family, e.point});
  if (!request.shard) return scope;
  const auto shard = series::parse_shard(*request.shard);
  std::ifstream series_file(request.series);
  const std::string series_text(std::istreambuf_iterator<char>(series_file), {});
  const auto assignment = series::assign_shards(loaded.plan, shard.count);
  report::ShardRecord record{shard.index, shard.count, series::fingerprint(loaded.plan, series_text, request.axes), {}};
  std::vector<series::ExperimentPlan> kept;
  std::vector<std::vector<expect::CompiledGuess>> kept_guesses;
  for (std::size_t i = 0; i < loaded.plan.experiments.size(); ++i) {
    auto& e = loaded.plan.experiments[i];
    record.plan.push_back({scope.planned[i], assignment[i]});
    if (assignment[i] == shard.index) {
      kept.push_back(std::move(e));
      kept_guesses.push_back(std::move(loaded.guesses[i]));
    } else {
      scope.elsewhere[e.name] = "shard " + series::Shard{assignment[i], shard.count}.str();
    }
  }
  loaded.plan.experiments = std::move(kept);
  loaded.guesses = std::move(kept_guesses);
  scope.shard = std::move(record);
  return scope;
}

// Runs every point of the loaded plan that `run` has no result for yet (`restored` are those an
// earlier attempt finished), the outputs hearing of each as it ends.
int execute(LoadedSeries& loaded, report::RunResult& run, const report::RunDirectory& dir, const report::RunRequest& request,
            Scope scope, std::vector<report::FinishedExperiment> restored) {
  const auto probe = runner::probe_devices();
  // A resumed run keeps what its first attempt recorded of the machine, and adds what it lacked.
  for (const auto& [k, v] : report::host_environment()) run.environment.try_emplace(k, v);
  for (const auto& [k, v] : probe.environment) run.environment.try_emplace(k, v);
  if (probe.devices == 0) run.environment.try_emplace("cuda", probe.unavailable);

  runner::RunOptions options{[&dir](const std::string& experiment) { return dir.files(experiment); }, request.filter, std::nullopt};
  if (request.device) options.device = *request.device == "cuda" ? Device::cuda : Device::cpu;

  report::Multiplex outputs;
  outputs.add(report::sinks::progress_line());
  outputs.add(report::sinks::chrome_traces(dir));
  outputs.add(report::sinks::results_json(dir));
  outputs.add(report::sinks::markdown_summary(dir));
  outputs.add(report::sinks::junit(dir));
  outputs.add(report::sinks::html_report(dir));
  outputs.add(report::sinks::terminal_report());
  report::Assembler assembler(run, outputs);
  assembler.set_planned(std::move(scope.planned));
  assembler.set_elsewhere(std::move(scope.elsewhere));
  assembler.set_sweep_guesses(std::move(loaded.sweep_guesses));
  assembler.restore(std::move(restored));
  auto to_run = loaded.plan;
  std::erase_if(to_run.experiments, [&run](const auto& e) { return run.find(e.name) != nullptr; });
  Observer observer(loaded, run, assembler, outputs);
  try {
    outputs.begin(run);
    runner::run_series(to_run, probe, options, observer);
    run.finished = report::utc_now();
    assembler.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "\nerror: {}\n", e.what());
    return cannot_write;
  }
  fmt::print("\nresults: {}\n", dir.results().string());
  return outcome_code(report::tally(run));
}

// `expr run --resume RUN_DIR [SERIES]`: the run's own request again, its finished points kept.
int resume(const RunArgs& args) {
  const report::RunDirectory dir(*args.resume);
  report::RunPlan recorded;
  report::RunResult earlier;
  try {
    recorded = dir.read_plan();
    earlier = dir.read();
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: cannot resume {}: {}\n", dir.root().string(), e.what());
    return bad_input;
  }
  auto request = recorded.request;
  if (!args.series.empty()) request.series = fs::absolute(args.series);
  auto loaded = load_series(request.series, request.axes);
  if (!loaded) return bad_input;
  Scope scope;
  try {
    scope = take_shard(*loaded, request);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "error: cannot resume {}: {}\n", dir.root().string(), e.what());
    return bad_input;
  }

  if (const auto changes = report::changed_points(recorded, earlier, loaded->plan); changes.points > 0) {
    for (const auto& p : changes.problems) fmt::print(stderr, "{}\n", p.str());
    fmt::print(stderr,
               "error: cannot resume {}: the series {} changed {} finished point{}; resuming would mix results of two different "
               "series in one run. Nothing ran. Restore the series, or start a new run.\n",
               dir.root().string(), request.series.string(), changes.points, changes.points == 1 ? "" : "s");
    return bad_input;
  }

  report::RunResult run;
  run.id = earlier.id;
  run.revision = earlier.revision;
  run.series = loaded->plan.name;
  run.series_file = args.series.empty() ? earlier.series_file : args.series.string();
  run.description = loaded->plan.description;
  run.planned = loaded->plan.experiments.size();
  run.shard = scope.shard;
  run.run_dir = dir.root();
  run.started = earlier.started;
  run.resumed = earlier.resumed;
  run.resumed.push_back(report::utc_now());
  run.environment = earlier.environment;
  std::vector<report::FinishedExperiment> restored;
  for (auto& e : earlier.experiments) {
    if (!report::has_result(e.measurement)) continue;
    const auto& points = loaded->plan.experiments;
    const auto at = static_cast<std::size_t>(
        std::find_if(points.begin(), points.end(), [&](const auto& p) { return p.name == e.measurement.experiment; }) - points.begin());
    restored.push_back({std::move(e.measurement), std::move(loaded->guesses.at(at)), points[at].family, points[at].point});
  }
  const auto left = run.planned - restored.size();
  if (args.dry_run) {
    for (const auto& e : loaded->plan.experiments)
      if (std::none_of(restored.begin(), restored.end(), [&](const auto& r) { return r.measurement.experiment == e.name; }))
        fmt::print("  {}\n", e.name);
    fmt::print("{} of {} experiments to run\n", left, run.planned);
    return ok;
  }
  try {
    record_request(dir, request, loaded->plan);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: cannot write the run directory {}: {}\n", dir.root().string(), e.what());
    return cannot_write;
  }
  fmt::print(stderr, "resuming {}: {} of {} experiments have a result; running the other {}\n", dir.root().string(), restored.size(),
             run.planned, left);
  return execute(*loaded, run, dir, request, std::move(scope), std::move(restored));
}

}  // namespace

fs::path default_run_dir(const std::string& series) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return fs::path("runs") / fmt::format("{}-{}", series, stamp);
}

int run(const RunArgs& args) {
  if (args.resume) return resume(args);
  auto loaded = load_series(args.series, args.axes);
  if (!loaded) return bad_input;
  const report::RunRequest request{fs::absolute(args.series), args.axes, args.filter, args.device, args.shard};
  Scope scope;
  try {
    scope = take_shard(*loaded, request);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return bad_input;
  }
  const auto& plan = loaded->plan;
  if (args.dry_run) {
    print_expansion(plan);
    return ok;
  }
  if (args.filter) {
    try {
      std::regex check(*args.filter);
    } catch (const std::regex_error& e) {
      fmt::print(stderr, "error: --filter '{}' is not a valid regex: {}\n", *args.filter, e.what());
      return bad_input;
    }
  }

  report::RunResult run;
  run.id = report::new_run_id();
  run.revision = report::expr_revision();
  run.series = plan.name;
  run.series_file = args.series.string();
  run.description = plan.description;
  run.planned = plan.experiments.size();
  run.shard = scope.shard;
  const report::RunDirectory dir(args.out.value_or(default_run_dir(plan.name)));
  run.run_dir = dir.root();
  run.started = report::utc_now();
  try {
    dir.create();
    record_request(dir, request, plan);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: cannot write the run directory {}: {}\n", dir.root().string(), e.what());
    return cannot_write;
  }
  return execute(*loaded, run, dir, request, std::move(scope), {});
}

}  // namespace expr::cli
