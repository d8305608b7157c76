// `expr run`: read and check the series, then run it, the outputs (report/sinks.hpp) hearing of
// each experiment as it ends; with --baseline, compare the finished run with a baseline and gate on
// it. `expr calibrate` runs the series through the same execute().
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>

#include "cli/commands.hpp"
#include "history/compare.hpp"
#include "history/recorder.hpp"
#include "report/assembler.hpp"
#include "report/run_directory.hpp"
#include "report/sinks.hpp"
#include "report/summary.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

namespace {

// Hands what the runner says to the assembler (finished experiments) and the sinks (the rest).
class Observer final : public runner::RunObserver {
 public:
  Observer(LoadedSeries& series, report::RunResult& run, report::Assembler& assembler, report::Sink& sink, const history::Noise& noise)
      : series_(series), run_(run), assembler_(assembler), sink_(sink), noise_(noise) {}

  void started(const series::ExperimentPlan& e, const runner::Placement& placement) override { sink_.started(e.name, placement); }
  void progress(const std::string& experiment, std::string_view phase, std::string_view detail) override {
    sink_.progress(experiment, phase, detail);
  }
  void log(const std::string& experiment, LogLevel level, std::string_view message) override { sink_.log(experiment, level, message); }

  void finished(outcome::Measurement m) override {
    // Environment facts the workers found (the GPU's, the plugin's libraries) join the run's.
    for (const auto& [k, v] : m.environment) run_.environment.try_emplace(k, v);
    // The point's calibrated run-to-run noise goes with its timings, before any guess reads them.
    const auto noise = [&](const char* metric) {
      const auto it = noise_.find({m.experiment, metric});
      return it == noise_.end() ? 0.0 : it->second;
    };
    if (m.device_time) m.device_time->run_to_run = noise("gpu_time");
    if (m.host) m.host->run_to_run = noise("host_time");
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
  const history::Noise& noise_;
};

fs::path default_run_dir(const std::string& series, const std::string& suffix = "") {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return fs::path("runs") / fmt::format("{}{}-{}", series, suffix, stamp);
}

}  // namespace

std::map<std::string, std::string> starting_environment(const runner::DeviceProbe& probe) {
  auto env = report::host_environment();
  for (const auto& [k, v] : probe.environment) env[k] = v;
  if (probe.devices == 0) env["cuda"] = probe.unavailable;
  return env;
}

Executed execute(LoadedSeries loaded, const fs::path& series_file, const fs::path& root, const runner::DeviceProbe& probe,
                 const Execution& how) {
  const auto& plan = loaded.plan;
  Executed x;
  auto& run = x.run;
  run.id = report::new_run_id();
  run.revision = report::expr_revision();
  run.series = plan.name;
  run.series_file = series_file.string();
  run.description = plan.description;
  run.planned = plan.experiments.size();
  const report::RunDirectory dir(root);
  run.run_dir = dir.root();
  run.started = report::utc_now();
  try {
    dir.create();
    std::ifstream series_text(series_file);
    util::write_atomically(dir.series_copy(), std::string(std::istreambuf_iterator<char>(series_text), {}));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot write the run directory {}: {}", dir.root().string(), e.what()));
  }
  run.environment = starting_environment(probe);

  runner::RunOptions options{[&dir](const std::string& experiment) { return dir.files(experiment); }, how.filter, how.device};
  report::Multiplex outputs;
  outputs.add(report::sinks::progress_line());
  outputs.add(report::sinks::chrome_traces(dir));
  outputs.add(report::sinks::results_json(dir));
  outputs.add(report::sinks::markdown_summary(dir));
  outputs.add(report::sinks::junit(dir));
  if (how.terminal_report) outputs.add(report::sinks::terminal_report());
  history::Recorder* recorder = nullptr;
  if (how.store) {
    auto sink = std::make_unique<history::Recorder>(*how.store, plan.gates);
    recorder = sink.get();
    outputs.add(std::move(sink));
  }
  report::Assembler assembler(run, outputs);
  std::vector<report::PlannedPoint> planned;
  for (const auto& e : plan.experiments) planned.push_back({e.name, e.family, e.point});
  assembler.set_planned(std::move(planned));
  assembler.set_sweep_guesses(std::move(loaded.sweep_guesses));
  Observer observer(loaded, run, assembler, outputs, how.noise);
  outputs.begin(run);
  runner::run_series(plan, probe, options, observer);
  run.finished = report::utc_now();
  assembler.finish();
  if (recorder) x.history_error = recorder->error();
  return x;
}

namespace {

// The finished run against its baseline: inconclusive experiments are measured once more (into
// RUN_DIR/remeasured, their new measurements taking the place of the first ones in the comparison
// and the history), then the gate decides. The comparison goes to the terminal, summary.md and
// junit.xml, and the verdict to the history. Returns ok, regression, or bad_input when the baseline
// cannot be compared.
int gate(const RunArgs& args, const history::RunRecord& base, const series::Gates& gates, Executed& x, const runner::DeviceProbe& probe,
         const Execution& how) {
  const auto& run = x.run;
  const auto options = gate_options(args.gate);
  auto candidate = history::snapshot(run, gates);
  history::Comparison comparison;
  try {
    comparison = history::compare(base, candidate, options);
    if (const auto again = comparison.inconclusive_experiments(); !again.empty()) {
      fmt::print(stderr, "\nmeasuring {} inconclusive experiment{} once more: {}\n", again.size(), again.size() == 1 ? "" : "s", fmt::join(again, ", "));
      auto loaded = load_series(args.series, args.axes);
      if (!loaded) return bad_input;
      Execution remeasure = how;
      remeasure.filter = util::exactly(again);
      remeasure.store = nullptr;  // the new measurements replace the first ones below, in this run
      remeasure.terminal_report = false;
      const auto second = execute(std::move(*loaded), args.series, run.run_dir / "remeasured", probe, remeasure);
      for (const auto& e : second.run.experiments) {
        if (std::find(again.begin(), again.end(), e.measurement.experiment) == again.end()) continue;
        auto record = history::snapshot(e);
        if (how.store) how.store->record_experiment(run.id, record);
        for (auto& c : candidate.experiments)
          if (c.identity == record.identity) c = record;
      }
      comparison = history::compare(base, candidate, options);
    }
  } catch (const history::EnvironmentMismatch& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return bad_input;
  }
  fmt::print("{}", history::terminal_text(comparison, ::isatty(STDOUT_FILENO)));
  const report::RunDirectory dir(run.run_dir);
  std::vector<report::JunitFailure> failures;
  const auto suite = run.series + ".gate";
  for (const auto& t : comparison.timings)
    if (t.verdict == history::Change::slower)
      failures.push_back({suite, t.experiment + " " + t.metric, "slower than the baseline",
                          fmt::format("{} → {} ({:+.2f}%), threshold {}", util::format_duration(t.base_median),
                                      util::format_duration(t.candidate_median), 100 * t.change, util::format_percent(t.threshold))});
  if (comparison.structure_gated)
    for (const auto& s : comparison.structure)
      if (s.regression) failures.push_back({suite, s.experiment + " " + s.figure, "structural regression", s.base + " → " + s.candidate + " " + s.detail});
  for (const auto& f : comparison.failed) failures.push_back({suite, f, "failed in the candidate", f});
  try {
    util::write_atomically(dir.summary(), report::markdown_report(run) + "\n" + history::markdown(comparison));
    util::write_atomically(dir.junit(), report::junit_report(run, failures));
    if (how.store) how.store->set_gate(run.id, base.id, !comparison.regression());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    x.history_error = e.what();
  }
  return comparison.regression() ? regression : ok;
}

}  // namespace

int run(const RunArgs& args) {
  auto loaded = load_series(args.series, args.axes);
  if (!loaded) return bad_input;
  if (args.dry_run) {
    print_expansion(loaded->plan);
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
  if (args.baseline) {
    try {
      gate_options(args.gate);
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      return bad_input;
    }
  }

  // The history is opened before anything is written or run: a file that cannot be used stops the
  // run here, not after an hour of measuring.
  std::optional<history::Store> store;
  if (!args.no_history) {
    try {
      store.emplace(args.history.value_or(default_history()));
      note_migration(*store);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}\n(--history PATH records elsewhere, --no-history not at all)\n", e.what());
      return cannot_write;
    }
  }
  // The baseline is found before the run, so a wrong one is reported before anything is measured,
  // and @last is the newest run before this one.
  std::optional<history::RunRecord> base;
  if (args.baseline) {
    try {
      base = load_run(*args.baseline, store ? &*store : nullptr, loaded->plan.name);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: --baseline {}: {}\n", *args.baseline, e.what());
      return bad_input;
    }
  }

  const auto probe = runner::probe_devices();
  Execution how;
  how.filter = args.filter;
  if (args.device) how.device = *args.device == "cuda" ? Device::cuda : Device::cpu;
  how.store = store ? &*store : nullptr;
  if (store) {
    how.noise = store->noise(loaded->plan.name, history::machine_fingerprint(starting_environment(probe)));
    if (!how.noise.empty())
      fmt::print(stderr, "timings carry the run-to-run noise of {} calibrated point{} (expr calibrate)\n", how.noise.size(), how.noise.size() == 1 ? "" : "s");
  }
  const auto gates = loaded->plan.gates;
  const auto name = loaded->plan.name;
  Executed x;
  try {
    x = execute(std::move(*loaded), args.series, args.out.value_or(default_run_dir(name)), probe, how);
  } catch (const std::exception& e) {
    fmt::print(stderr, "\nerror: {}\n", e.what());
    return cannot_write;
  }
  fmt::print("\nresults: {}\n", report::RunDirectory(x.run.run_dir).results().string());
  if (store) fmt::print("history: {} (run {})\n", store->file().string(), x.run.id);
  int code = outcome_code(report::tally(x.run));
  if (base) {
    int gated = ok;
    try {
      gated = gate(args, *base, gates, x, probe, how);
    } catch (const std::exception& e) {
      fmt::print(stderr, "\nerror: {}\n", e.what());
      return cannot_write;
    }
    // A failed experiment says more than a slow one; a regression more than a guess.
    if (code != experiment_failed && gated != ok) code = gated;
  }
  if (!x.history_error.empty() && code == ok) return cannot_write;
  return code;
}

int calibrate(const CalibrateArgs& args) {
  history::CompareOptions options;
  try {
    options = gate_options(args.gate);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return bad_input;
  }
  auto first = load_series(args.run.series, args.run.axes);
  if (!first) return bad_input;
  const auto gates = first->plan.gates;
  const auto name = first->plan.name;
  std::optional<history::Store> store;
  try {
    store.emplace(args.run.history.value_or(default_history()));
    note_migration(*store);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return cannot_write;
  }
  const auto probe = runner::probe_devices();
  Execution how;
  how.filter = args.run.filter;
  if (args.run.device) how.device = *args.run.device == "cuda" ? Device::cuda : Device::cpu;
  how.store = &*store;
  how.terminal_report = false;
  const auto root = args.run.out.value_or(default_run_dir(name, "-calibration"));
  std::vector<history::RunRecord> records;
  std::vector<std::string> ids;
  bool failed = false;
  for (std::size_t k = 1; k <= args.runs; ++k) {
    auto loaded = k == 1 ? std::move(first) : load_series(args.run.series, args.run.axes);
    if (!loaded) return bad_input;
    fmt::print(stderr, "calibration run {} of {}\n", k, args.runs);
    try {
      const auto x = execute(std::move(*loaded), args.run.series, root / fmt::format("run-{}", k), probe, how);
      if (!x.history_error.empty()) return cannot_write;
      failed = failed || report::tally(x.run).experiments_failed > 0;
      records.push_back(history::snapshot(x.run, gates));
      ids.push_back(x.run.id);
    } catch (const std::exception& e) {
      fmt::print(stderr, "\nerror: {}\n", e.what());
      return cannot_write;
    }
  }
  try {
    const auto calibration = history::calibrate(records, options);
    const auto id = store->record_calibration(calibration, ids);
    fmt::print("{}", history::terminal_text(calibration));
    util::write_atomically(root / "calibration.md", history::markdown(calibration));
    fmt::print("\ncalibration {} stored in {}: later runs of {} on this machine carry each point's run-to-run noise\nreport: {}\n", id,
               store->file().string(), name, (root / "calibration.md").string());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return cannot_write;
  }
  return failed ? experiment_failed : ok;
}

}  // namespace expr::cli
