// `expr run`: read and check the series, then run it, the outputs (report/sinks.hpp) hearing of
// each experiment as it ends.
#include <fmt/format.h>

#include <chrono>
#include <fstream>

#include "cli/commands.hpp"
#include "report/assembler.hpp"
#include "report/run_directory.hpp"
#include "report/sinks.hpp"
#include "runner/series_runner.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"
#include "util/regex.hpp"

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

  void finished(outcome::Measurement m) override {
    // Environment facts the workers found (the GPU's, the plugin's libraries) join the run's.
    for (const auto& [k, v] : m.environment) run_.environment.try_emplace(k, v);
    const auto& experiments = series_.plan.experiments;
    const auto at = static_cast<std::size_t>(
        std::find_if(experiments.begin(), experiments.end(), [&](const auto& e) { return e.name == m.experiment; }) - experiments.begin());
    const auto& planned = experiments.at(at);
    assembler_.add(std::move(m), std::move(series_.guesses.at(at)), planned.family, planned.point);  // each experiment finishes once
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

}  // namespace

int run(const RunArgs& args) {
  auto loaded = load_series(args.series, args.axes);
  if (!loaded) return bad_input;
  const auto& plan = loaded->plan;
  if (args.dry_run) {
    print_expansion(plan);
    return ok;
  }
  if (args.filter) {
    try {
      util::Regex check(*args.filter);
    } catch (const util::RegexError& e) {
      log::error("--filter '{}' is not a valid regex: {}", *args.filter, e.what());
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
  try {
    dir.create();
    log::open_file(dir.log());
    std::ifstream series_text(args.series);
    util::write_atomically(dir.series_copy(), std::string(std::istreambuf_iterator<char>(series_text), {}));
  } catch (const std::exception& e) {
    log::error("cannot write the run directory {}: {}", dir.root().string(), e.what());
    return cannot_write;
  }

  const auto probe = runner::probe_devices();
  run.environment = report::host_environment();
  for (const auto& [k, v] : probe.environment) run.environment[k] = v;
  if (probe.devices == 0) run.environment["cuda"] = probe.unavailable;
  if (probe.devices == 0) log::info("{}", probe.unavailable);
  else log::info("{} CUDA device{}", probe.devices, probe.devices == 1 ? "" : "s");

  runner::RunOptions options{[&dir](const std::string& experiment) { return dir.files(experiment); }, args.filter, std::nullopt};
  if (args.device) options.device = *args.device == "cuda" ? Device::cuda : Device::cpu;

  report::Multiplex outputs;
  outputs.add(report::sinks::run_log());
  outputs.add(report::sinks::progress_line());
  outputs.add(report::sinks::chrome_traces(dir));
  outputs.add(report::sinks::results_json(dir));
  outputs.add(report::sinks::markdown_summary(dir));
  outputs.add(report::sinks::junit(dir));
  outputs.add(report::sinks::terminal_report());
  report::Assembler assembler(run, outputs);
  std::vector<report::PlannedPoint> planned;
  for (const auto& e : plan.experiments) planned.push_back({e.name, e.family, e.point});
  assembler.set_planned(std::move(planned));
  assembler.set_sweep_guesses(std::move(loaded->sweep_guesses));
  Observer observer(*loaded, run, assembler, outputs);
  try {
    outputs.begin(run);
    runner::run_series(plan, probe, options, observer);
    run.finished = report::utc_now();
    assembler.finish();
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return cannot_write;
  }
  fmt::print("\nresults: {}\n", dir.results().string());
  print_traces_line(dir);
  return outcome_code(report::tally(run));
}

}  // namespace expr::cli
