// `expr run` (new or resumed, gated against a baseline) and `expr calibrate`, on the runner.
#include "measure/run.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "history/record.hpp"
#include "session/comparison.hpp"
#include "session/gate.hpp"
#include "session/places.hpp"
#include "session/shard_plan.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace expr::measure {

namespace fs = std::filesystem;
using session::Status;
using session::Stop;

SeriesRun::SeriesRun(const session::RunArgs& args, session::PreparedRun prepared, runner::PendingProbe& probe)
    : args_(args), prepared_(std::move(prepared)) {
  const auto& plan = prepared_.loaded.plan;
  auto* store = prepared_.store.get();
  // The baseline is found before the run, so a wrong one is reported before anything is measured,
  // and @last is the newest run before this one.
  if (args.baseline)
    base_ = session::or_stop(Status::bad_input, [&] {
      auto base = session::load_run(*args.baseline, store, plan.name);
      history::check_same_series(base.series, plan.name);
      return base;
    }, fmt::format("--baseline {}: ", *args.baseline));
  probe_ = probe.result();
  // Asked for the GPU by name, a run without one would skip every experiment and pass.
  if (prepared_.request.device == "cuda" && probe_.devices == 0)
    throw Stop(Status::bad_input, fmt::format("--device cuda: there is no CUDA device here ({}); nothing ran", probe_.unavailable));
  how_.store = store;
  if (args.gpus) {
    how_.workers = session::or_stop(Status::bad_input, [&] {
      return choose_workers(*args.gpus, probe_, probe_.devices == 0 ? first_on_gpu(plan, prepared_.request.device) : std::nullopt);
    });
    if (how_.workers.gpus.empty()) session::note("{} worker{} at once on the CPU", how_.workers.count, how_.workers.count == 1 ? "" : "s");
    else session::note("one worker per GPU: {}", fmt::join(how_.workers.gpus, ", "));
  }
  if (store) {
    how_.noise = store->noise(plan.name, history::machine_fingerprint(starting_environment(probe_)));
    if (!how_.noise.empty())
      session::note("timings carry the run-to-run noise of {} calibrated point{} (expr calibrate)", how_.noise.size(), how_.noise.size() == 1 ? "" : "s");
  }
}

Executed SeriesRun::execute() {
  auto& p = prepared_;
  return session::or_stop(Status::cannot_write, [&] {
    if (!args_.resume) return execute_new(p.loaded, args_.series, *p.dir, p.request, args_.force, probe_, how_);
    record_request(*p.dir, p.request, p.loaded.plan);
    return measure::execute(p.loaded, std::move(p.run), *p.dir, p.request, std::move(p.restored), probe_, how_);
  });
}

// Measures the experiments of `again` (first.to_measure_again()) once more, into RUN_DIR/remeasured,
// and those timings take the second measurement's place in `candidate`, in the history and, through
// RUN_DIR/remeasured/taken.json, in the run directory read back (history::take_second_measurement):
// the experiments' other timings stay as first measured, so that no timing is called slower on one
// measurement where the gate asks for two.
std::vector<std::string> SeriesRun::remeasure(const history::Comparison& first, const std::vector<history::TimingKey>& again,
                                              const report::RunResult& run, history::RunRecord& candidate) {
  std::vector<std::string> experiments;
  for (const auto& key : again)
    if (std::find(experiments.begin(), experiments.end(), key.experiment) == experiments.end()) experiments.push_back(key.experiment);
  if (experiments.empty()) return experiments;
  const auto slower = first.count(history::Change::slower);  // each of them is measured again
  std::vector<std::string> why;
  if (slower > 0) why.push_back(fmt::format("{} timing{} called slower, which a second measurement must show too", slower, slower == 1 ? "" : "s"));
  if (again.size() > slower)
    why.push_back(fmt::format("{} inconclusive that more samples can settle", again.size() - slower));
  session::note("\nmeasuring {} experiment{} once more ({}): {}", experiments.size(), experiments.size() == 1 ? "" : "s", fmt::join(why, "; "),
                fmt::join(experiments, ", "));
  // All of this run's shard: no shard to choose.
  auto request = prepared_.request;
  request.shard.reset();
  auto loaded = session::load_request(request.series, request, nullptr, nullptr);
  request.filter = util::exactly(experiments);
  const auto remeasured = report::RunDirectory(run.run_dir).remeasured();
  Execution quiet = how_;
  quiet.store = nullptr;  // the new measurements are merged into this run below
  quiet.terminal_report = false;
  const auto second = session::or_stop(Status::cannot_write, [&] {
    return execute_new(loaded, run.series_file, report::RunDirectory(remeasured), request, false, probe_, quiet);
  });
  session::or_stop(Status::cannot_write, [&] { history::write_taken(remeasured, again); });
  for (const auto& identity : history::take_second_measurement(candidate, history::snapshot(second.run, prepared_.loaded.plan.gates), again))
    if (how_.store) session::or_stop(Status::cannot_write, [&] { how_.store->record_experiment(run.id, *candidate.find(identity)); });
  return experiments;
}

Gated SeriesRun::gate(Executed& x) {
  const auto& run = x.run;
  auto options = session::gate_options(args_.gate);
  auto candidate = history::snapshot(run, prepared_.loaded.plan.gates);
  if (how_.store) session::or_stop(Status::cannot_write, [&] { session::learn_noise(*how_.store, *base_, candidate, options); });
  Gated g;
  const bool comparable = session::or_stop(Status::cannot_write, [&] {
    try {
      g.comparison = history::compare(*base_, candidate, options);
      const auto taken = g.comparison->to_measure_again();
      g.remeasured = remeasure(*g.comparison, taken, run, candidate);
      if (!g.remeasured.empty()) {
        auto again = history::compare(*base_, candidate, options);
        history::judge_second_measurement(*g.comparison, again, taken);
        g.comparison = std::move(again);
      }
      return true;
    } catch (const history::Incomparable& e) {
      log::error("{}", e.what());
      return false;
    }
  });
  if (!comparable) return {std::nullopt, Status::bad_input, {}};
  g.status = g.comparison->regression() ? Status::regression : Status::ok;
  if (auto error = session::record_gate(run, *g.comparison, how_.store, base_->id); !error.empty()) x.history_error = error;
  return g;
}

namespace {

// One calibration run, the k-th, into its folder of `root`.
Executed calibration_run(session::LoadedSeries& loaded, const session::CalibrateArgs& args, const fs::path& root, std::size_t k,
                         const runner::DeviceProbe& probe, const Execution& how) {
  session::note("calibration run {} of {}", k, args.runs);
  const report::RunRequest request{fs::absolute(args.run.series), args.run.axes, args.run.filter, args.run.device, std::nullopt, std::nullopt};
  return session::or_stop(Status::cannot_write, [&] {
    return execute_new(loaded, args.run.series, report::RunDirectory(root / fmt::format("run-{}", k)), request, false, probe, how);
  });
}

}  // namespace

Calibrated calibrate(const session::CalibrateArgs& args) {
  const auto options = session::gate_options(args.gate);
  runner::PendingProbe pending;  // while the series and its plugins load
  auto first = session::load_series(args.run.series, args.run.axes);
  const auto gates = first.plan.gates;
  Calibrated c;
  c.series = first.plan.name;
  const auto store = session::or_stop(Status::cannot_write, [&] { return session::open_history(args.run.history.value_or(session::default_history())); });
  const auto probe = pending.result();
  Execution how;
  how.store = store.get();
  how.terminal_report = false;
  const auto root = args.run.out.value_or(session::default_run_dir(c.series, "-calibration"));
  std::vector<history::RunRecord> records;
  std::vector<std::string> ids;
  for (std::size_t k = 1; k <= args.runs; ++k) {
    auto loaded = k == 1 ? std::move(first) : session::load_series(args.run.series, args.run.axes);
    auto x = calibration_run(loaded, args, root, k, probe, how);
    if (x.signal != 0) {
      c.interrupted = std::move(x.run);
      c.signal = x.signal;
      c.status = Status::interrupted;
      return c;
    }
    if (!x.history_error.empty()) throw Stop(Status::cannot_write, std::vector<Stop::Line>{});  // the recorder said why
    if (report::tally(x.run).experiments_failed > 0) c.status = Status::experiment_failed;
    records.push_back(history::snapshot(x.run, gates));
    ids.push_back(x.run.id);
  }
  c.history_file = store->file();
  c.report_file = root / "calibration.md";
  session::or_stop(Status::cannot_write, [&] {
    c.calibration = history::calibrate(records, options);
    c.id = store->record_calibration(c.calibration, ids);
    util::write_atomically(c.report_file, history::markdown(c.calibration));
  });
  return c;
}

}  // namespace expr::measure
