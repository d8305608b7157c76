// Running a series into its run directory, the outputs and the history hearing of each experiment.
#include "measure/execute.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>

#include "history/recorder.hpp"
#include "report/resume.hpp"
#include "report/sinks.hpp"
#include "runner/interrupt.hpp"
#include "series/shard.hpp"
#include "session/loaded_series.hpp"
#include "session/places.hpp"
#include "session/shard_plan.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"

namespace expr::measure {

namespace fs = std::filesystem;

namespace {

// Hands what the runner says to the assembler (finished experiments) and the sinks (the rest).
class Observer final : public runner::RunObserver {
 public:
  Observer(session::LoadedSeries& series, report::RunResult& run, report::Assembler& assembler, report::Sink& sink, const history::Noise& noise)
      : series_(series), run_(run), assembler_(assembler), sink_(sink), noise_(noise) {}

  void started(const series::ExperimentPlan& e, const runner::Placement& placement) override { sink_.started(e.name, placement); }
  void progress(const std::string& experiment, std::string_view phase, std::string_view detail) override {
    sink_.progress(experiment, phase, detail);
  }

  void finished(outcome::Measurement m) override {
    // Environment facts the workers found (the GPU's, the plugin's libraries) join the run's.
    for (const auto& [k, v] : m.environment) run_.environment.try_emplace(k, v);
    // The point's calibrated run-to-run noise goes with its timings, before any guess reads them.
    const auto carry = [&](std::optional<outcome::Stats>& stats, const char* metric) {
      const auto it = noise_.find({m.experiment, metric});
      if (!stats || it == noise_.end()) return;
      stats->run_to_run = it->second.run_to_run;
      stats->run_to_run_df = it->second.df;
    };
    carry(m.device_time, "gpu_time");
    carry(m.host, "host_time");
    const auto& experiments = series_.plan.experiments;
    const auto at = static_cast<std::size_t>(
        std::find_if(experiments.begin(), experiments.end(), [&](const auto& e) { return e.name == m.experiment; }) - experiments.begin());
    const auto& planned = experiments.at(at);
    assembler_.add({std::move(m), std::move(series_.guesses.at(at)), planned.family, planned.point});  // each experiment finishes once
  }

 private:
  session::LoadedSeries& series_;
  report::RunResult& run_;
  report::Assembler& assembler_;
  report::Sink& sink_;
  const history::Noise& noise_;
};

// A new run's identity, for a plan about to run into `dir`.
report::RunResult new_run(const session::LoadedSeries& loaded, const fs::path& series_file, const report::RunDirectory& dir) {
  const auto& plan = loaded.plan;
  report::RunResult run;
  run.id = report::new_run_id();
  run.revision = report::expr_revision();
  run.series = plan.name;
  run.series_file = series_file.string();
  run.description = plan.description;
  run.planned = plan.experiments.size();
  run.shard = loaded.shard;
  run.run_dir = dir.root();
  run.started = report::utc_now();
  return run;
}

// The outputs of a run, the files first: an experiment is in the journal before the log or the
// progress line says it ended. With a store, the history's recorder too (into `recorder`).
void add_outputs(report::Multiplex& outputs, const report::RunDirectory& dir, const series::Plan& plan, const Execution& how,
                 history::Recorder*& recorder) {
  outputs.add(report::sinks::chrome_traces(dir));
  outputs.add(report::sinks::results_json(dir));
  outputs.add(report::sinks::markdown_summary(dir));
  outputs.add(report::sinks::junit(dir));
  outputs.add(report::sinks::html_report(dir));
  outputs.add(report::sinks::run_log());
  outputs.add(report::sinks::progress_line());
  if (how.terminal_report) outputs.add(report::sinks::terminal_report());
  if (how.store) {
    auto sink = std::make_unique<history::Recorder>(*how.store, plan.gates);
    recorder = sink.get();
    outputs.add(std::move(sink));
  }
}

// Every point of the series, those other shards run too: guesses naming a family resolve against
// them, and a guess reading one of another shard says where it runs.
void plan_assembler(report::Assembler& assembler, session::LoadedSeries& loaded) {
  std::vector<report::PlannedPoint> planned;
  std::map<std::string, std::string> elsewhere;
  if (loaded.shard) {
    for (const auto& p : loaded.shard->plan) {
      planned.push_back(p.planned);
      if (p.shard != loaded.shard->index) elsewhere[p.planned.name] = "shard " + series::Shard{p.shard, loaded.shard->count}.str();
    }
  } else {
    for (const auto& e : loaded.plan.experiments) planned.push_back({e.name, e.family, e.point});
  }
  assembler.set_planned(std::move(planned));
  assembler.set_elsewhere(std::move(elsewhere));
  assembler.set_sweep_guesses(std::move(loaded.sweep_guesses));
}

// What the runner is told: where each worker writes, the filter, the device, the workers.
runner::RunOptions runner_options(const report::RunDirectory& dir, const report::RunRequest& request, const Execution& how,
                                  const runner::Interrupts& interrupts) {
  runner::RunOptions options{[&dir](const std::string& experiment) { return dir.files(experiment); }, request.filter, std::nullopt,
                             &interrupts};
  if (request.device) options.device = *request.device == "cuda" ? Device::cuda : Device::cpu;
  options.gpus = how.workers.gpus;
  options.workers = how.workers.count;
  return options;
}

}  // namespace

std::map<std::string, std::string> starting_environment(const runner::DeviceProbe& probe) {
  auto env = report::host_environment();
  for (const auto& [k, v] : probe.environment) env[k] = v;
  if (probe.devices == 0) env["cuda"] = probe.unavailable;
  return env;
}

void record_request(const report::RunDirectory& dir, const report::RunRequest& request, const series::Plan& plan) {
  util::write_atomically(dir.series_copy(), session::file_text(request.series));
  dir.write_plan(report::run_plan(request, plan));
}

Executed execute(session::LoadedSeries& loaded, report::RunResult run, const report::RunDirectory& dir, const report::RunRequest& request,
                 std::vector<report::FinishedExperiment> restored, const runner::DeviceProbe& probe, const Execution& how) {
  // From here on Ctrl-C and SIGTERM stop the run (runner/interrupt.hpp) instead of ending expr.
  const runner::Interrupts interrupts;
  Executed x;
  x.run = std::move(run);
  auto& r = x.run;
  log::open_file(dir.log());
  // A resumed run keeps what its first attempt recorded of the machine, and adds what it lacked.
  for (const auto& [k, v] : starting_environment(probe)) r.environment.try_emplace(k, v);
  if (probe.devices == 0) log::info("{}", probe.unavailable);
  else log::info("{} CUDA device{}", probe.devices, probe.devices == 1 ? "" : "s");
  auto options = runner_options(dir, request, how, interrupts);
  report::Multiplex outputs;
  history::Recorder* recorder = nullptr;
  add_outputs(outputs, dir, loaded.plan, how, recorder);
  report::Assembler assembler(r, outputs);
  plan_assembler(assembler, loaded);
  std::set<std::string> done;
  for (const auto& e : restored) done.insert(e.measurement.experiment);
  assembler.restore(std::move(restored));
  auto to_run = loaded.plan;
  std::erase_if(to_run.experiments, [&done](const auto& e) { return done.count(e.name) > 0; });
  Observer observer(loaded, r, assembler, outputs, how.noise);
  outputs.begin(r);
  if (how.workers.count > 1) {
    // The longest first, by what each took last time: the run ends soonest.
    const auto costs = session::expected_costs(how.store, to_run, history::WallTimes::From::newest_each);
    if (!costs.run.empty()) options.expected_seconds = costs.seconds;
  }
  runner::run_series(to_run, probe, options, observer);
  r.finished = report::utc_now();
  r.interrupted = interrupts.name();
  assembler.finish();
  if (recorder) x.history_error = recorder->error();
  x.signal = interrupts.first_signal();
  return x;
}

Executed execute_new(session::LoadedSeries& loaded, const fs::path& series_file, const report::RunDirectory& dir,
                     const report::RunRequest& request, bool force, const runner::DeviceProbe& probe, const Execution& how) {
  const auto lock = session::open_run_directory(dir, force);  // held until the run has written everything
  try {
    record_request(dir, request, loaded.plan);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot write the run directory {}: {}", dir.root().string(), e.what()));
  }
  return execute(loaded, new_run(loaded, series_file, dir), dir, request, {}, probe, how);
}

}  // namespace expr::measure
