// Judging recorded experiments again, for `expr replay` and `expr merge`.
#include "session/replay.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/assembler.hpp"
#include "report/run_directory.hpp"
#include "report/sinks.hpp"
#include "series/series.hpp"
#include "session/loaded_series.hpp"
#include "session/places.hpp"
#include "util/log.hpp"

namespace expr::session {

namespace fs = std::filesystem;

// The series' own guesses (those about points and those about whole sweeps) replaced by those of
// `series_file` when one is given.
RecordedGuesses recorded_guesses(const report::RunResult& recorded, const std::vector<report::PlannedPoint>& planned,
                                 const std::optional<fs::path>& series_file) {
  std::vector<std::string> names;  // families, as guesses name them
  for (const auto& p : planned)
    if (std::find(names.begin(), names.end(), p.family) == names.end()) names.push_back(p.family);
  std::vector<util::Problem> problems;
  std::optional<series::Series> s;
  if (series_file) s = series::read(*series_file);

  // The series' own guesses first, then the plugin's, as a run orders them.
  RecordedGuesses out;
  const auto add = [&](const std::string& experiment, const series::GuessSpec& spec, std::string_view context) {
    if (auto g = expect::compile_guess(spec, names, context, problems)) out.points[experiment].push_back(std::move(*g));
  };
  std::vector<std::pair<std::string, series::GuessSpec>> sweep_specs;
  if (s)
    for (const auto& x : s->experiments) {
      if (std::find(names.begin(), names.end(), x.name.value) == names.end()) {
        problems.push_back({x.name.pos, fmt::format("experiment {} is not in the recorded run", x.name.value)});
        continue;
      }
      for (const auto& e : recorded.experiments)
        if (e.family == x.name.value)
          for (const auto& spec : x.guesses) add(e.measurement.experiment, spec, "");
      for (const auto& spec : x.sweep_guesses) sweep_specs.emplace_back(x.name.value, spec);
    }
  // A recorded guess is detached (report/run_directory.cpp): reported where it was recorded.
  for (const auto& e : recorded.experiments)
    for (const auto& g : e.guesses)
      if (!s || g.spec.origin == series::GuessOrigin::plugin) add(e.measurement.experiment, g.spec, fmt::format("{}: the recorded guess: ", e.measurement.experiment));
  // results.json holds a sweep guess once per group it was judged for.
  if (!s)
    for (const auto& v : recorded.sweep_guesses)
      if (std::none_of(sweep_specs.begin(), sweep_specs.end(), [&](const auto& f) {
            return f.first == v.family && f.second.check == v.guess.spec.check && f.second.pos().str() == v.guess.spec.pos().str();
          }))
        sweep_specs.emplace_back(v.family, v.guess.spec);
  out.sweeps = compile_sweep_guesses(sweep_specs, planned, problems);
  if (!problems.empty()) throw util::InputError(std::move(problems));
  return out;
}

namespace {

// The outputs of a run judged again into the run directory `out`, locked in `lock`: its files and expr.log.
void add_directory_outputs(report::Multiplex& outputs, const fs::path& out, bool force, std::optional<report::RunLock>& lock) {
  const report::RunDirectory dir(out);
  lock = open_run_directory(dir, force);
  or_stop(Status::cannot_write, [&] { log::open_file(dir.log()); });
  outputs.add(report::sinks::native_traces(dir));
  outputs.add(report::sinks::chrome_traces(dir));
  outputs.add(report::sinks::results_json(dir));
  outputs.add(report::sinks::markdown_summary(dir));
  outputs.add(report::sinks::junit(dir));
  outputs.add(report::sinks::html_report(dir));
}

}  // namespace

Status judge_again(report::RunResult& run, report::RunResult recorded, RecordedGuesses guesses, std::vector<report::PlannedPoint> planned,
                   const std::optional<fs::path>& out, bool force, std::string_view story) {
  report::Multiplex outputs;
  std::optional<report::RunLock> lock;
  if (out) add_directory_outputs(outputs, *out, force, lock);
  log::info("{}", story);
  outputs.add(report::sinks::run_log());
  outputs.add(report::sinks::terminal_report());
  report::Assembler assembler(run, outputs);
  assembler.set_planned(std::move(planned));
  assembler.set_sweep_guesses(std::move(guesses.sweeps));
  or_stop(Status::cannot_write, [&] {
    outputs.begin(run);
    for (auto& e : recorded.experiments) {
      const auto name = e.measurement.experiment;
      assembler.add({std::move(e.measurement), std::move(guesses.points[name]), std::move(e.family), std::move(e.point)});
    }
    assembler.finish();
  });
  return status_of(report::tally(run));
}

namespace {

// The recorded run, its traces read now (so that a damaged one is bad input, not a failure to
// write), and the guesses to judge it with.
struct Recorded {
  report::RunResult run;
  std::vector<report::PlannedPoint> planned;
  RecordedGuesses guesses;
};
Recorded read_recorded(const ReplayArgs& args) {
  return or_stop(Status::bad_input, [&] {
    Recorded r;
    r.run = report::RunDirectory(args.run_dir).read();
    for (const auto& e : r.run.experiments) r.planned.push_back({e.measurement.experiment, e.family, e.point});
    for (const auto& e : r.run.experiments) {
      if (e.measurement.trace) e.measurement.trace->record_count();
      if (e.measurement.cold && e.measurement.cold->trace) e.measurement.cold->trace->record_count();
    }
    r.guesses = recorded_guesses(r.run, r.planned, args.series);
    return r;
  });
}

}  // namespace

Judged replay(const ReplayArgs& args) {
  auto recorded = read_recorded(args);
  Judged j;
  auto& run = j.run;
  run.id = report::new_run_id();
  run.revision = report::expr_revision();
  run.series = recorded.run.series;
  run.series_file = args.series ? args.series->string() : recorded.run.series_file;
  run.description = recorded.run.description;
  run.environment = recorded.run.environment;
  run.started = recorded.run.started;
  run.finished = recorded.run.finished;
  run.interrupted = recorded.run.interrupted;
  run.planned = recorded.run.experiments.size();
  run.run_dir = args.out.value_or(args.run_dir);
  if (args.out) refuse_out_is_input(*args.out, args.run_dir, "the recorded run");
  j.status = judge_again(run, std::move(recorded.run), std::move(recorded.guesses), std::move(recorded.planned), args.out, args.force,
                         fmt::format("replaying {}{}", args.run_dir.string(), args.series ? " with the guesses of " + args.series->string() : ""));
  return j;
}

}  // namespace expr::session
