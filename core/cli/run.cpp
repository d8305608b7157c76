// `expr run`: read and check the series, then run it, the outputs (report/sinks.hpp) hearing of
// each experiment as it ends, or take up a run that stopped before its end (`--resume`); the run
// is recorded in the history, and with --baseline the finished run is compared with a baseline and
// gated on it. `expr calibrate` runs the series several times through the same execute().
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli/commands.hpp"
#include "history/compare.hpp"
#include "history/recorder.hpp"
#include "report/assembler.hpp"
#include "report/resume.hpp"
#include "report/run_directory.hpp"
#include "report/sinks.hpp"
#include "report/summary.hpp"
#include "runner/interrupt.hpp"
#include "runner/series_runner.hpp"
#include "series/shard.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"
#include "util/regex.hpp"
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
  LoadedSeries& series_;
  report::RunResult& run_;
  report::Assembler& assembler_;
  report::Sink& sink_;
  const history::Noise& noise_;
};

// The series file as it is run, and plan.json: what a resumed run repeats and is checked against.
// Throws std::runtime_error.
void record_request(const report::RunDirectory& dir, const report::RunRequest& request, const series::Plan& plan) {
  std::ifstream series_text(request.series);
  util::write_atomically(dir.series_copy(), std::string(std::istreambuf_iterator<char>(series_text), {}));
  dir.write_plan(report::run_plan(request, plan));
}

// Each point's expected cost: its wall time in the history (`from` says which runs count); a
// point without one, the median of those known; all the same (1) when none is known. `run` is the
// history run they come from, empty when none.
struct ExpectedCosts {
  std::vector<double> seconds;  // parallel to the plan's experiments
  std::string run;
};
ExpectedCosts expected_costs(history::Store* store, const series::Plan& plan, history::WallTimes::From from) {
  ExpectedCosts out{std::vector<double>(plan.experiments.size(), 1.0), ""};
  if (!store || plan.experiments.empty()) return out;
  std::vector<std::string> identities;
  for (const auto& e : plan.experiments) identities.push_back(e.name);
  const auto known = store->wall_times(plan.name, identities, from);
  if (known.seconds.empty()) return out;
  std::vector<double> values;
  for (const auto& [identity, seconds] : known.seconds) values.push_back(seconds);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  const double median = values[values.size() / 2];
  for (std::size_t i = 0; i < identities.size(); ++i) {
    const auto it = known.seconds.find(identities[i]);
    out.seconds[i] = it == known.seconds.end() ? median : it->second;
  }
  out.run = known.run;
  return out;
}

// The series of `request`, read from `file` (the path as the user gave it, for messages) and
// checked (load_series). With request.shard ("K/N") only that
// shard's points are kept, and `shard` records which shard it is, the series fingerprint and the
// whole plan with each point's shard: balanced by the wall times of the newest whole run of the
// series in `store` (none: equal costs), or, resuming a shard, as `resumed` recorded it. Prints
// every problem and returns nothing on error.
std::optional<LoadedSeries> load_request(const fs::path& file, const report::RunRequest& request, history::Store* store,
                                         const report::ShardRecord* resumed) {
  auto loaded = load_series(file, request.axes);
  if (loaded && request.rounds)
    for (auto& e : loaded->plan.experiments) e.iterations.rounds = *request.rounds;
  if (!loaded || !request.shard) return loaded;
  series::Shard shard;
  try {
    shard = series::parse_shard(*request.shard);
  } catch (const std::invalid_argument& e) {
    log::error("{}", e.what());
    return std::nullopt;
  }
  auto& plan = loaded->plan;
  std::vector<std::size_t> assignment;
  std::string costs_from;
  if (resumed) {
    // The shards of a series must agree on who runs what, so a resumed shard keeps its assignment
    // whatever the history has learnt since.
    std::map<std::string, std::size_t> recorded;
    for (const auto& p : resumed->plan) recorded[p.planned.name] = p.shard;
    for (const auto& e : plan.experiments) {
      const auto it = recorded.find(e.name);
      if (it == recorded.end()) {
        log::error("cannot resume shard {}: the series now has {}, which the shard's plan lacks; start a new run of every shard",
                   shard.str(), e.name);
        return std::nullopt;
      }
      assignment.push_back(it->second);
    }
    costs_from = resumed->costs_from;
  } else {
    const auto costs = expected_costs(store, plan, history::WallTimes::From::one_whole_run);
    assignment = series::assign_shards(plan, costs.seconds, shard.count);
    costs_from = costs.run;
  }
  std::ifstream series_file(file);
  const std::string series_text(std::istreambuf_iterator<char>(series_file), {});
  report::ShardRecord record{shard.index, shard.count, series::fingerprint(plan, series_text, request.axes), costs_from, {}};
  std::vector<series::ExperimentPlan> kept;
  std::vector<std::vector<expect::CompiledGuess>> kept_guesses;
  for (std::size_t i = 0; i < plan.experiments.size(); ++i) {
    auto& e = plan.experiments[i];
    record.plan.push_back({{e.name, e.family, e.point}, assignment[i]});
    if (assignment[i] != shard.index) continue;
    kept.push_back(std::move(e));
    kept_guesses.push_back(std::move(loaded->guesses[i]));
  }
  plan.experiments = std::move(kept);
  loaded->guesses = std::move(kept_guesses);
  loaded->shard = std::move(record);
  return loaded;
}

// How many workers run at once, and on which GPUs (`--gpus`).
struct Workers {
  std::vector<int> gpus;  // one worker each; empty: `count` workers, no GPU of their own
  std::size_t count = 1;
};

// Whether an experiment runs on the CPU whatever the machine has: so asked (by --device or the
// series), or its plugin runs nowhere else.
bool runs_on_cpu(const series::ExperimentPlan& e, const std::optional<std::string>& device) {
  const auto& devices = e.plugin->description().devices;
  if (std::find(devices.begin(), devices.end(), Device::cuda) == devices.end()) return true;
  return device ? *device == "cpu" : e.device == series::DeviceChoice::cpu;
}

// `--gpus all|N|I,J,...` against the machine: the GPUs, one worker each. Without a CUDA device, the
// experiments must all run on the CPU, and then N (or as many as listed) workers run them; `all`
// is one. Throws std::invalid_argument with the reason.
Workers choose_workers(const std::string& spec, const runner::DeviceProbe& probe, const series::Plan& plan,
                       const std::optional<std::string>& device) {
  std::vector<int> listed;
  bool all = spec == "all";
  if (!all) {
    std::stringstream items(spec);
    for (std::string item; std::getline(items, item, ',');) {
      int value = -1;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || value < 0)
        throw std::invalid_argument(fmt::format("--gpus {}: expected all, a number of GPUs, or GPU indices as in 0,2,3", spec));
      if (std::find(listed.begin(), listed.end(), value) != listed.end())
        throw std::invalid_argument(fmt::format("--gpus {}: GPU {} is listed twice", spec, value));
      listed.push_back(value);
    }
    if (listed.empty()) throw std::invalid_argument(fmt::format("--gpus {}: expected all, a number of GPUs, or GPU indices as in 0,2,3", spec));
  }
  const bool count = !all && listed.size() == 1 && spec.find(',') == std::string::npos;  // "2": two GPUs; "2," is GPU 2
  if (count && listed[0] == 0) throw std::invalid_argument(fmt::format("--gpus 0: at least one GPU; GPU 0 alone is --gpus 0,"));
  Workers w;
  if (probe.devices == 0) {
    const auto gpu = std::find_if(plan.experiments.begin(), plan.experiments.end(), [&](const auto& e) { return !runs_on_cpu(e, device); });
    if (gpu != plan.experiments.end())
      throw std::invalid_argument(fmt::format("--gpus {}: no CUDA device ({}), and {} may run on one; --device cpu runs every experiment on the CPU",
                                              spec, probe.unavailable, gpu->name));
    w.count = all ? 1 : count ? static_cast<std::size_t>(listed[0]) : listed.size();
    return w;
  }
  if (all) {
    for (int i = 0; i < probe.devices; ++i) w.gpus.push_back(i);
  } else if (count) {
    if (listed[0] > probe.devices)
      throw std::invalid_argument(fmt::format("--gpus {}: this machine has {} CUDA device{}", spec, probe.devices, probe.devices == 1 ? "" : "s"));
    for (int i = 0; i < listed[0]; ++i) w.gpus.push_back(i);
  } else {
    for (const auto i : listed)
      if (i >= probe.devices)
        throw std::invalid_argument(fmt::format("--gpus {}: there is no GPU {}; this machine has {} CUDA device{} (0 to {})", spec, i, probe.devices,
                                                probe.devices == 1 ? "" : "s", probe.devices - 1));
    w.gpus = listed;
  }
  w.count = w.gpus.size();
  return w;
}

// What one execution of a series adds to running it: what `expr run` (new or resumed), each run of
// `expr calibrate` and the second measurement of inconclusive experiments differ in.
struct Execution {
  history::Store* store = nullptr;  // record the run here
  history::Noise noise;             // each point's calibrated run-to-run noise, carried by its timings
  bool terminal_report = true;
  Workers workers;                  // --gpus
};
struct Executed {
  report::RunResult run;
  std::string history_error;  // the history stopped recording this run, and why
  int signal = 0;             // the first signal that interrupted the run; 0 when none did
};

// The environment a run starts with: the host's and the devices'.
std::map<std::string, std::string> starting_environment(const runner::DeviceProbe& probe) {
  auto env = report::host_environment();
  for (const auto& [k, v] : probe.environment) env[k] = v;
  if (probe.devices == 0) env["cuda"] = probe.unavailable;
  return env;
}

// A new run's identity, for a plan about to run into `dir`.
report::RunResult new_run(const LoadedSeries& loaded, const fs::path& series_file, const report::RunDirectory& dir) {
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

// Runs every point of the loaded plan that `run` has no result for yet (`restored` are those an
// earlier attempt finished), the outputs hearing of each as it ends; Ctrl-C or SIGTERM stop it,
// and what did not finish is recorded as interrupted. The caller holds the run directory's lock.
// Throws std::runtime_error when the run directory cannot be written.
Executed execute(LoadedSeries& loaded, report::RunResult run, const report::RunDirectory& dir, const report::RunRequest& request,
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

  runner::RunOptions options{[&dir](const std::string& experiment) { return dir.files(experiment); }, request.filter, std::nullopt,
                             &interrupts};
  if (request.device) options.device = *request.device == "cuda" ? Device::cuda : Device::cpu;
  options.gpus = how.workers.gpus;
  options.workers = how.workers.count;

  // The files first: an experiment is in the journal before the log or the progress line says it ended.
  report::Multiplex outputs;
  outputs.add(report::sinks::chrome_traces(dir));
  outputs.add(report::sinks::results_json(dir));
  outputs.add(report::sinks::markdown_summary(dir));
  outputs.add(report::sinks::junit(dir));
  outputs.add(report::sinks::html_report(dir));
  outputs.add(report::sinks::run_log());
  outputs.add(report::sinks::progress_line());
  if (how.terminal_report) outputs.add(report::sinks::terminal_report());
  history::Recorder* recorder = nullptr;
  if (how.store) {
    auto sink = std::make_unique<history::Recorder>(*how.store, loaded.plan.gates);
    recorder = sink.get();
    outputs.add(std::move(sink));
  }
  report::Assembler assembler(r, outputs);
  // Every point of the series, those other shards run too: guesses naming a family resolve
  // against them, and a guess reading one of another shard says where it runs.
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
  std::set<std::string> done;
  for (const auto& e : restored) done.insert(e.measurement.experiment);
  assembler.restore(std::move(restored));
  auto to_run = loaded.plan;
  std::erase_if(to_run.experiments, [&done](const auto& e) { return done.count(e.name) > 0; });
  Observer observer(loaded, r, assembler, outputs, how.noise);
  outputs.begin(r);
  if (how.workers.count > 1) {
    // The longest first, by what each took last time: the run ends soonest.
    const auto costs = expected_costs(how.store, to_run, history::WallTimes::From::newest_each);
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

// A new run of `loaded`, from `series_file` as the user named it, into `dir`: the directory created and locked (refused when it holds an
// earlier run, unless `force`), the request recorded, then execute(). On refusal prints why and
// gives the exit code in `refused`. Throws std::runtime_error when the directory cannot be written.
std::optional<Executed> execute_new(LoadedSeries& loaded, const fs::path& series_file, const report::RunDirectory& dir,
                                    const report::RunRequest& request, bool force, const runner::DeviceProbe& probe, const Execution& how,
                                    int& refused) {
  const auto lock = open_run_directory(dir, force, refused);  // held until the run has written everything
  if (!lock) return std::nullopt;
  try {
    record_request(dir, request, loaded.plan);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot write the run directory {}: {}", dir.root().string(), e.what()));
  }
  return execute(loaded, new_run(loaded, series_file, dir), dir, request, {}, probe, how);
}

// Says on stderr how many experiments an interrupted run left, and how to run them.
void report_interruption(const report::RunResult& run) {
  const auto t = report::tally(run);
  const report::RunDirectory dir(run.run_dir);
  fmt::print(stderr, "interrupted ({}): {} of {} experiments did not finish; they are marked \"interrupted\" in {}, and "
             "`expr run --resume {}` runs them\n",
             run.interrupted, t.experiments_interrupted, run.planned, dir.results().string(), dir.root().string());
}

// After a finished run: its report again, and with a history the next run gated against this one
// and, where the machine's noise was never measured, the calibration that measures it.
std::vector<NextStep> next_steps(const RunArgs& args, const report::RunResult& run, const history::Store* store, bool uncalibrated) {
  const auto program = shell_word(args.program);
  const auto series = shell_word(run.series_file);
  // A history given by --history (not found by default) must be named again.
  const auto history = args.history ? " --history " + shell_word(args.history->string()) : std::string();
  std::vector<NextStep> next{{fmt::format("{} show {}", program, shell_word(run.run_dir.string())), "this report again"}};
  if (!store) return next;
  next.push_back({fmt::format("{} run {} --baseline @last{}", program, series, history), "the next run, gated against this one (exit 5: a regression)"});
  if (uncalibrated)
    next.push_back({fmt::format("{} calibrate {} --runs 5{}", program, series, history),
                    "this machine's run-to-run noise, so that gates and timing guesses know it"});
  return next;
}

// The finished run against its baseline: inconclusive experiments are measured once more (into
// RUN_DIR/remeasured, their new measurements taking the place of the first ones in the comparison
// and the history), then the gate decides. The comparison goes to the terminal, summary.md and
// junit.xml, and the verdict to the history. Returns ok, regression, or bad_input when the baseline
// cannot be compared.
int gate(const RunArgs& args, const report::RunRequest& request, const history::RunRecord& base, const series::Gates& gates, Executed& x,
         const runner::DeviceProbe& probe, const Execution& how) {
  const auto& run = x.run;
  auto options = gate_options(args.gate);
  auto candidate = history::snapshot(run, gates);
  if (how.store) learn_noise(*how.store, base, candidate, options);
  history::Comparison comparison;
  try {
    comparison = history::compare(base, candidate, options);
    if (const auto again = comparison.inconclusive_experiments(); !again.empty()) {
      fmt::print(stderr, "\nmeasuring {} inconclusive experiment{} once more: {}\n", again.size(), again.size() == 1 ? "" : "s", fmt::join(again, ", "));
      // Exactly these points, all of this run's shard: no shard to choose.
      auto remeasure = request;
      remeasure.shard.reset();
      auto loaded = load_request(remeasure.series, remeasure, nullptr, nullptr);
      if (!loaded) return bad_input;
      remeasure.filter = util::exactly(again);
      Execution quiet = how;
      quiet.store = nullptr;  // the new measurements replace the first ones below, in this run
      quiet.terminal_report = false;
      int refused = ok;
      const auto second = execute_new(*loaded, run.series_file, report::RunDirectory(run.run_dir / "remeasured"), remeasure, false, probe, quiet, refused);
      if (!second) return refused;
      for (const auto& e : second->run.experiments) {
        if (std::find(again.begin(), again.end(), e.measurement.experiment) == again.end()) continue;
        auto record = history::snapshot(e);
        if (how.store) how.store->record_experiment(run.id, record);
        for (auto& c : candidate.experiments)
          if (c.identity == record.identity) c = record;
      }
      comparison = history::compare(base, candidate, options);
    }
  } catch (const history::Incomparable& e) {
    log::error("{}", e.what());
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
  for (const auto& m : comparison.missing) failures.push_back({suite, m, "missing from the candidate", m + ": in the baseline, not in this run"});
  try {
    util::write_atomically(dir.summary(), report::markdown_report(run) + "\n" + history::markdown(comparison));
    util::write_atomically(dir.junit(), report::junit_report(run, failures));
    if (how.store) how.store->set_gate(run.id, base.id, !comparison.regression());
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    x.history_error = e.what();
  }
  return comparison.regression() ? regression : ok;
}

// What `run` needs to go: the series, the run's identity and directory, and for a resumed run the
// lock it took before reading the directory and the points that already have a result.
struct Prepared {
  std::optional<LoadedSeries> loaded;
  report::RunResult run;
  std::optional<report::RunDirectory> dir;
  report::RunRequest request;
  std::optional<report::RunLock> lock;
  std::vector<report::FinishedExperiment> restored;
};

// `expr run --resume RUN_DIR [SERIES]`: the run's own request again, its finished points kept.
// Returns ok with `p` filled, or the exit code to stop with; a dry run lists what would run.
int prepare_resume(const RunArgs& args, history::Store* store, Prepared& p) {
  const report::RunDirectory dir(*args.resume);
  // Taken before the run is read, so that no other run writes it meanwhile; held until the run has
  // written everything. A dry run writes nothing and needs none; a directory that is not there has
  // no run to resume, which reading it says.
  if (!args.dry_run && fs::is_directory(dir.root())) {
    try {
      p.lock = dir.lock_for_resume();
    } catch (const report::RunDirectoryRefused& e) {
      log::error("cannot resume: {}", e.what());
      return cannot_write;
    }
  }
  report::RunPlan recorded;
  report::RunResult earlier;
  try {
    recorded = dir.read_plan();
    earlier = dir.read();
  } catch (const std::exception& e) {
    log::error("cannot resume {}: {}", dir.root().string(), e.what());
    return bad_input;
  }
  p.request = recorded.request;
  if (!args.series.empty()) p.request.series = fs::absolute(args.series);
  p.loaded = load_request(p.request.series, p.request, store, earlier.shard ? &*earlier.shard : nullptr);
  if (!p.loaded) return bad_input;
  auto& loaded = *p.loaded;

  if (const auto changes = report::changed_points(recorded, earlier, loaded.plan); changes.points > 0) {
    for (const auto& problem : changes.problems) fmt::print(stderr, "{}\n", problem.str());
    log::error("cannot resume {}: the series {} changed {} finished point{}; resuming would mix results of two different "
               "series in one run. Nothing ran. Restore the series, or start a new run.",
               dir.root().string(), p.request.series.string(), changes.points, changes.points == 1 ? "" : "s");
    return bad_input;
  }

  auto& run = p.run;
  run.id = earlier.id;
  run.revision = earlier.revision;
  run.series = loaded.plan.name;
  run.series_file = args.series.empty() ? earlier.series_file : args.series.string();
  run.description = loaded.plan.description;
  run.planned = loaded.plan.experiments.size();
  run.shard = loaded.shard;
  run.run_dir = dir.root();
  run.started = earlier.started;
  run.resumed = earlier.resumed;
  run.resumed.push_back(report::utc_now());
  run.environment = earlier.environment;
  // Each finished point with its guesses as the series states them now (changed_points made sure
  // the plan has it).
  const auto& points = loaded.plan.experiments;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < points.size(); ++i) index[points[i].name] = i;
  for (auto& e : earlier.experiments) {
    if (!report::has_result(e.measurement)) continue;
    const auto at = index.at(e.measurement.experiment);
    p.restored.push_back({std::move(e.measurement), std::move(loaded.guesses.at(at)), points[at].family, points[at].point});
    index.erase(points[at].name);
  }
  const auto left = run.planned - p.restored.size();
  if (args.dry_run) {
    for (const auto& e : points)
      if (index.count(e.name)) fmt::print("  {}\n", e.name);
    fmt::print("{} of {} experiments to run\n", left, run.planned);
    return ok;
  }
  p.dir = dir;
  fmt::print(stderr, "resuming {}: {} of {} experiments have a result; running the other {}\n", dir.root().string(), p.restored.size(),
             run.planned, left);
  if (const std::string now = report::expr_revision(); now != earlier.revision)
    fmt::print(stderr, "note: expr {} started the run; expr {} runs the rest\n", earlier.revision, now);
  return ok;
}

}  // namespace

const bool has_runner = true;

fs::path default_run_dir(const std::string& series, const std::string& suffix) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return fs::path("runs") / fmt::format("{}{}-{}", series, suffix, stamp);
}

int run(const RunArgs& args) {
  // The history is opened before anything is run: a file that cannot be used stops the run here,
  // not after an hour of measuring; and shards are balanced by the wall times it holds. A dry run
  // reads one that is there and makes none.
  std::optional<history::Store> store;
  const auto history_file = args.history.value_or(default_history());
  if (!args.no_history && (!args.dry_run || fs::exists(history_file))) {
    try {
      store.emplace(history_file);
      note_migration(*store);
    } catch (const std::exception& e) {
      log::error("{}\n(--history PATH records elsewhere, --no-history not at all)", e.what());
      return cannot_write;
    }
  }
  Prepared p;
  if (args.resume) {
    const int code = prepare_resume(args, store ? &*store : nullptr, p);
    if (code != ok || args.dry_run) return code;
  } else {
    p.request = {fs::absolute(args.series), args.axes, args.filter, args.device, args.shard, args.rounds};
    p.loaded = load_request(args.series, p.request, store ? &*store : nullptr, nullptr);
    if (!p.loaded) return bad_input;
    if (args.dry_run) {
      print_expansion(p.loaded->plan);
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
    p.dir.emplace(args.out.value_or(default_run_dir(p.loaded->plan.name)));
  }
  auto& loaded = *p.loaded;
  const auto& dir = *p.dir;

  // The baseline is found before the run, so a wrong one is reported before anything is measured,
  // and @last is the newest run before this one.
  std::optional<history::RunRecord> base;
  if (args.baseline) {
    try {
      base = load_run(*args.baseline, store ? &*store : nullptr, loaded.plan.name);
      history::check_same_series(base->series, loaded.plan.name);
    } catch (const std::exception& e) {
      log::error("--baseline {}: {}", *args.baseline, e.what());
      return bad_input;
    }
  }

  const auto probe = runner::probe_devices();
  // Asked for the GPU by name, a run without one would skip every experiment and pass.
  if (p.request.device == "cuda" && probe.devices == 0) {
    log::error("--device cuda: there is no CUDA device here ({}); nothing ran", probe.unavailable);
    return bad_input;
  }
  Execution how;
  how.store = store ? &*store : nullptr;
  if (args.gpus) {
    try {
      how.workers = choose_workers(*args.gpus, probe, loaded.plan, p.request.device);
    } catch (const std::invalid_argument& e) {
      log::error("{}", e.what());
      return bad_input;
    }
    if (how.workers.gpus.empty())
      fmt::print(stderr, "{} worker{} at once on the CPU\n", how.workers.count, how.workers.count == 1 ? "" : "s");
    else
      fmt::print(stderr, "one worker per GPU: {}\n", fmt::join(how.workers.gpus, ", "));
  }
  if (store) {
    how.noise = store->noise(loaded.plan.name, history::machine_fingerprint(starting_environment(probe)));
    if (!how.noise.empty())
      fmt::print(stderr, "timings carry the run-to-run noise of {} calibrated point{} (expr calibrate)\n", how.noise.size(), how.noise.size() == 1 ? "" : "s");
  }
  const auto gates = loaded.plan.gates;
  std::optional<Executed> x;
  try {
    if (args.resume) {
      record_request(dir, p.request, loaded.plan);
      x = execute(loaded, std::move(p.run), dir, p.request, std::move(p.restored), probe, how);
    } else {
      int refused = ok;
      x = execute_new(loaded, args.series, dir, p.request, args.force, probe, how, refused);
      if (!x) return refused;
    }
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return cannot_write;
  }
  fmt::print("\nresults: {}\n", dir.results().string());
  if (store) fmt::print("history: {} (run {})\n", store->file().string(), x->run.id);
  if (x->signal != 0) {
    report_interruption(x->run);
    print_ending(dir, {{resume_command(args.program, dir.root()), "run the experiments that did not finish"}});
    return interrupted_base + x->signal;
  }
  int code = outcome_code(report::tally(x->run));
  if (base) {
    int gated = ok;
    try {
      gated = gate(args, p.request, *base, gates, *x, probe, how);
    } catch (const std::exception& e) {
      log::error("{}", e.what());
      return cannot_write;
    }
    // A failed experiment says more than a slow one; a regression more than a guess.
    if (code != experiment_failed && gated != ok) code = gated;
  }
  print_ending(dir, next_steps(args, x->run, store ? &*store : nullptr, how.noise.empty()));
  if (!x->history_error.empty() && code == ok) return cannot_write;
  return code;
}

int calibrate(const CalibrateArgs& args) {
  const auto options = gate_options(args.gate);
  auto first = load_series(args.run.series, args.run.axes);
  if (!first) return bad_input;
  const auto gates = first->plan.gates;
  const auto name = first->plan.name;
  std::optional<history::Store> store;
  try {
    store.emplace(args.run.history.value_or(default_history()));
    note_migration(*store);
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return cannot_write;
  }
  const auto probe = runner::probe_devices();
  Execution how;
  how.store = &*store;
  how.terminal_report = false;
  const report::RunRequest request{fs::absolute(args.run.series), args.run.axes, args.run.filter, args.run.device, std::nullopt, std::nullopt};
  const auto root = args.run.out.value_or(default_run_dir(name, "-calibration"));
  std::vector<history::RunRecord> records;
  std::vector<std::string> ids;
  bool failed = false;
  for (std::size_t k = 1; k <= args.runs; ++k) {
    auto loaded = k == 1 ? std::move(first) : load_series(args.run.series, args.run.axes);
    if (!loaded) return bad_input;
    fmt::print(stderr, "calibration run {} of {}\n", k, args.runs);
    try {
      int refused = ok;
      const auto x = execute_new(*loaded, args.run.series, report::RunDirectory(root / fmt::format("run-{}", k)), request, false, probe, how, refused);
      if (!x) return refused;
      if (x->signal != 0) {
        report_interruption(x->run);
        return interrupted_base + x->signal;
      }
      if (!x->history_error.empty()) return cannot_write;
      failed = failed || report::tally(x->run).experiments_failed > 0;
      records.push_back(history::snapshot(x->run, gates));
      ids.push_back(x->run.id);
    } catch (const std::exception& e) {
      log::error("{}", e.what());
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
    log::error("{}", e.what());
    return cannot_write;
  }
  return failed ? experiment_failed : ok;
}

}  // namespace expr::cli
