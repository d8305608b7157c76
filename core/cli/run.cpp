// `expr run`: read and check the series, then run it, the outputs (report/sinks.hpp) hearing of
// each experiment as it ends; or take up a run that stopped before its end (`--resume`).
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "cli/commands.hpp"
#include "report/assembler.hpp"
#include "report/run_directory.hpp"
#include "report/resume.hpp"
#include "report/sinks.hpp"
#include "runner/interrupt.hpp"
#include "runner/series_runner.hpp"
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

fs::path default_run_dir(const std::string& series) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return fs::path("runs") / fmt::format("{}-{}", series, stamp);
}

// The series file as it is run, and plan.json: what a resumed run repeats and is checked against.
// Throws std::runtime_error.
void record_request(const report::RunDirectory& dir, const report::RunRequest& request, const series::Plan& plan) {
  std::ifstream series_text(request.series);
  util::write_atomically(dir.series_copy(), std::string(std::istreambuf_iterator<char>(series_text), {}));
  dir.write_plan(report::run_plan(request, plan));
}

// Runs every point of the loaded plan that `run` has no result for yet (`restored` are those an
// earlier attempt finished), the outputs hearing of each as it ends; Ctrl-C or SIGTERM stop it,
// and what did not finish is recorded as interrupted. The caller holds the run directory's lock.
int execute(LoadedSeries& loaded, report::RunResult& run, const report::RunDirectory& dir, const report::RunRequest& request,
            std::vector<report::FinishedExperiment> restored) {
  // From here on Ctrl-C and SIGTERM stop the run (runner/interrupt.hpp) instead of ending expr.
  const runner::Interrupts interrupts;
  const auto probe = runner::probe_devices();
  // A resumed run keeps what its first attempt recorded of the machine, and adds what it lacked.
  for (const auto& [k, v] : report::host_environment()) run.environment.try_emplace(k, v);
  for (const auto& [k, v] : probe.environment) run.environment.try_emplace(k, v);
  if (probe.devices == 0) run.environment.try_emplace("cuda", probe.unavailable);

  runner::RunOptions options{[&dir](const std::string& experiment) { return dir.files(experiment); }, request.filter, std::nullopt,
                             &interrupts};
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
  std::vector<report::PlannedPoint> planned;
  for (const auto& e : loaded.plan.experiments) planned.push_back({e.name, e.family, e.point});
  assembler.set_planned(std::move(planned));
  assembler.set_sweep_guesses(std::move(loaded.sweep_guesses));
  std::set<std::string> done;
  for (const auto& r : restored) done.insert(r.measurement.experiment);
  assembler.restore(std::move(restored));
  auto to_run = loaded.plan;
  std::erase_if(to_run.experiments, [&done](const auto& e) { return done.count(e.name) > 0; });
  Observer observer(loaded, run, assembler, outputs);
  try {
    outputs.begin(run);
    runner::run_series(to_run, probe, options, observer);
    run.finished = report::utc_now();
    run.interrupted = interrupts.name();
    assembler.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "\nerror: {}\n", e.what());
    return cannot_write;
  }
  fmt::print("\nresults: {}\n", dir.results().string());
  if (interrupts.count() > 0) {
    const auto t = report::tally(run);
    fmt::print(stderr, "interrupted ({}): {} of {} experiments did not finish; they are marked \"interrupted\" in {}, and "
               "`expr run --resume {}` runs them\n",
               run.interrupted, t.experiments_interrupted, run.planned, dir.results().string(), dir.root().string());
    return interrupted_base + interrupts.first_signal();
  }
  return outcome_code(report::tally(run));
}

// `expr run --resume RUN_DIR [SERIES]`: the run's own request again, its finished points kept.
int resume(const RunArgs& args) {
  const report::RunDirectory dir(*args.resume);
  // Taken before the run is read, so that no other run writes it meanwhile; held until the run has
  // written everything. A dry run writes nothing and needs none; a directory that is not there has
  // no run to resume, which reading it says.
  std::optional<report::RunLock> lock;
  if (!args.dry_run && fs::is_directory(dir.root())) {
    try {
      lock = dir.lock_for_resume();
    } catch (const report::RunDirectoryRefused& e) {
      fmt::print(stderr, "error: cannot resume: {}\n", e.what());
      return cannot_write;
    }
  }
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
  run.run_dir = dir.root();
  run.started = earlier.started;
  run.resumed = earlier.resumed;
  run.resumed.push_back(report::utc_now());
  run.environment = earlier.environment;
  // Each finished point with its guesses as the series states them now (changed_points made sure
  // the plan has it).
  const auto& points = loaded->plan.experiments;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < points.size(); ++i) index[points[i].name] = i;
  std::vector<report::FinishedExperiment> restored;
  for (auto& e : earlier.experiments) {
    if (!report::has_result(e.measurement)) continue;
    const auto at = index.at(e.measurement.experiment);
    restored.push_back({std::move(e.measurement), std::move(loaded->guesses.at(at)), points[at].family, points[at].point});
    index.erase(points[at].name);
  }
  const auto left = run.planned - restored.size();
  if (args.dry_run) {
    for (const auto& e : points)
      if (index.count(e.name)) fmt::print("  {}\n", e.name);
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
  if (const std::string now = report::expr_revision(); now != earlier.revision)
    fmt::print(stderr, "note: expr {} started the run; expr {} runs the rest\n", earlier.revision, now);
  return execute(*loaded, run, dir, request, std::move(restored));
}

}  // namespace

int run(const RunArgs& args) {
  if (args.resume) return resume(args);
  auto loaded = load_series(args.series, args.axes);
  if (!loaded) return bad_input;
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
  const report::RunDirectory dir(args.out.value_or(default_run_dir(plan.name)));
  run.run_dir = dir.root();
  run.started = report::utc_now();
  const report::RunRequest request{fs::absolute(args.series), args.axes, args.filter, args.device};
  int refused = 0;
  const auto lock = open_run_directory(dir, args.force, refused);  // held until the run has written everything
  if (!lock) return refused;
  try {
    record_request(dir, request, plan);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: cannot write the run directory {}: {}\n", dir.root().string(), e.what());
    return cannot_write;
  }
  return execute(*loaded, run, dir, request, {});
}

}  // namespace expr::cli
