// `expr history` (the runs recorded, one experiment's timing over them), `expr compare` and `expr
// across`, with
// what `expr run --baseline` and `expr calibrate` share with them: the history's place, the gate's
// options, a run named by directory or reference.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "cli/commands.hpp"
#include "history/across.hpp"
#include "history/compare.hpp"
#include "history/store.hpp"
#include "report/table.hpp"
#include "util/atomic_file.hpp"
#include "util/units.hpp"
#include "util/log.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

fs::path default_history() {
  if (const char* env = std::getenv("EXPR_HISTORY"); env && *env) return env;
  return fs::path("runs") / "history.sqlite";
}

void note_migration(const history::Store& store) {
  if (store.found_version() > 0 && store.found_version() < history::Store::schema_version)
    fmt::print(stderr, "{}: migrated from schema version {} to {}\n", store.file().string(), store.found_version(), history::Store::schema_version);
}

std::pair<std::string, double> parse_threshold(const std::string& option) {
  const auto eq = option.find('=');
  const auto metric = option.substr(0, eq);
  if (eq == std::string::npos || std::find(series::gated_metrics.begin(), series::gated_metrics.end(), metric) == series::gated_metrics.end())
    throw std::invalid_argument(
        fmt::format("{}: write METRIC=FRACTION with METRIC one of {}, e.g. gpu_time=3%", option, fmt::join(series::gated_metrics, ", ")));
  auto text = option.substr(eq + 1);
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.pop_back();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(value >= 0) || !std::isfinite(value))
    throw std::invalid_argument(fmt::format("{}: '{}' is not a fraction such as 3% or 0.03", option, option.substr(eq + 1)));
  return {metric, percent ? value / 100 : value};
}

history::CompareOptions gate_options(const GateArgs& args) {
  history::CompareOptions o;
  for (const auto& option : args.thresholds) {
    const auto [metric, fraction] = parse_threshold(option);
    o.thresholds[metric] = fraction;
  }
  o.structure = args.structure;
  o.alpha = args.alpha;
  o.across_environments = args.across_environments;
  return o;
}

// A run directory, or a history reference resolved within `series`.
history::RunRecord load_run(const std::string& what, history::Store* store, const std::string& series) {
  if (what.starts_with("@")) {
    if (!store) throw std::runtime_error(fmt::format("{}: a history reference needs a history, and there is none here", what));
    return *store->load(store->resolve(what, series));
  }
  if (!fs::is_directory(what)) throw std::runtime_error(fmt::format("{}: neither a run directory nor a history reference (@last, @last~N, @last-good, @ID)", what));
  return history::read_run_directory(what);
}

void learn_noise(history::Store& store, const history::RunRecord& base, const history::RunRecord& candidate, history::CompareOptions& options) {
  // Twenty runs: enough degrees of freedom that the t quantile is near its limit, recent enough
  // that the machine is the one measured now.
  constexpr std::size_t runs = 20;
  history::learn_history(store.timings_over_time(candidate.series, history::machine_fingerprint(candidate.environment), {base.id, candidate.id}, runs),
                         candidate.gates, options);
}

int history(const HistoryArgs& args) {
  const auto file = args.history.value_or(default_history());
  if (!fs::exists(file)) {
    log::error("{}: no history here; `expr run` records one (or name it with --history PATH)", file.string());
    return bad_input;
  }
  try {
    history::Store store(file);
    note_migration(store);
    if (args.experiment.empty()) {
      report::Table t{{"run", "series", "started", "revision", "experiments", "guesses ✓ ✗ ?", "failed", "gate", "machine"}, {}};
      for (const auto& r : store.runs(args.series, args.limit))
        t.rows.push_back({r.id, r.series, r.started, r.revision, fmt::format("{} of {}", r.recorded, r.planned),
                          fmt::format("{} {} {}", r.tally.confirmed, r.tally.contradicted, r.tally.not_evaluable),
                          fmt::format("{}", r.tally.experiments_failed), r.gate.empty() ? "" : r.gate + " against " + r.baseline,
                          report::clip(r.machine, 60)});
      fmt::print("{}: {} run{} shown\n\n{}\n", file.string(), t.rows.size(), t.rows.size() == 1 ? "" : "s", t.text("  "));
      return ok;
    }
    auto series = args.series;
    if (series.empty()) {
      const auto names = store.series_names();
      if (names.size() != 1) {
        log::error("the history holds {} series; say which with --series NAME", names.size());
        return bad_input;
      }
      series = names.front();
    }
    const auto points = store.metric_over_time(series, args.experiment, args.metric, args.limit);
    if (points.empty()) {
      log::error("no {} of {} in series {} in {}", args.metric, args.experiment, series, file.string());
      return bad_input;
    }
    // Steps: each run against the one before it, tested as `expr compare` tests two runs.
    const auto options = gate_options(args.gate);
    auto thresholds = series::Gates{}.thresholds;
    for (const auto& [metric, threshold] : options.thresholds) thresholds[metric] = threshold;
    std::vector<history::TimingComparison> steps;
    for (std::size_t i = 1; i < points.size(); ++i) {
      const auto &before = points[i - 1].stats, &after = points[i].stats;
      // A step within one machine's runs only: across machines the figure is another quantity.
      if (points[i - 1].machine != points[i].machine || before.samples.empty() || after.samples.empty() || before.median <= 0 ||
          after.median <= 0)
        continue;
      steps.push_back(history::test_timing(points[i].run, args.metric, before, after));
    }
    history::decide(steps, thresholds, options.alpha);
    report::Table t{{"run", "started", "revision", "median", "spread", "samples", "step"}, {}};
    for (const auto& p : points) {
      std::string step;
      for (const auto& s : steps)
        if (s.experiment == p.run && (s.verdict == history::Change::slower || s.verdict == history::Change::faster))
          step = fmt::format("{} {:+.2f}% ({})", s.verdict == history::Change::slower ? "▲" : "▼", 100 * s.change, history::to_string(s.verdict));
      t.rows.push_back({p.run, p.started, p.revision, util::format_duration(p.stats.median), util::format_percent(p.stats.spread),
                        fmt::format("{}", p.stats.count), step});
    }
    fmt::print("{} {} over {} run{} of {}; a step is a change from the run before beyond {} (Mann-Whitney U, Holm over {} step{})\n\n{}",
               args.experiment, args.metric, points.size(), points.size() == 1 ? "" : "s", series,
               util::format_percent(thresholds.at(args.metric)), steps.size(), steps.size() == 1 ? "" : "s", t.text("  ") + "\n");
    return ok;
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return bad_input;
  }
}

int compare(const CompareArgs& args) {
  auto options = gate_options(args.gate);
  history::Comparison comparison;
  try {
    std::optional<history::Store> store;
    const auto file = args.history.value_or(default_history());
    const bool references = args.base.starts_with("@") || args.candidate.starts_with("@");
    if (references && !fs::exists(file))
      throw std::runtime_error(fmt::format("{}: no history here to resolve references in (--history PATH)", file.string()));
    // The history also tells how far each point moves between processes, where there is one; two
    // run directories still compare without it.
    if (fs::exists(file)) {
      try {
        store.emplace(file);
        note_migration(*store);
      } catch (const std::runtime_error& e) {
        if (references) throw;
        log::warn("{}; the comparison learns nothing from it", e.what());
      }
    }
    // The candidate first: a reference for the baseline is resolved within its series.
    auto series = args.series;
    if (series.empty() && args.candidate.starts_with("@") && store) {
      const auto names = store->series_names();
      if (names.size() != 1) throw std::runtime_error(fmt::format("the history holds {} series; say which with --series NAME", names.size()));
      series = names.front();
    }
    const auto candidate = load_run(args.candidate, store ? &*store : nullptr, series);
    const auto base = load_run(args.base, store ? &*store : nullptr, candidate.series);
    if (base.id == candidate.id)
      throw std::runtime_error(fmt::format("{} and {} are the same run, {}", args.base, args.candidate, base.id));
    if (store) learn_noise(*store, base, candidate, options);
    comparison = history::compare(base, candidate, options);
  } catch (const std::exception& e) {  // a reference that names no run, another machine, a damaged file
    log::error("{}", e.what());
    return bad_input;
  }
  fmt::print("{}", history::terminal_text(comparison, ::isatty(STDOUT_FILENO)));
  if (args.markdown) {
    try {
      util::write_atomically(*args.markdown, history::markdown(comparison));
    } catch (const std::exception& e) {
      log::error("{}", e.what());
      return cannot_write;
    }
  }
  return comparison.regression() ? regression : ok;
}

int across(const AcrossArgs& args) {
  history::Across view;
  try {
    std::optional<history::Store> store;
    const auto file = args.history.value_or(default_history());
    const bool references = std::any_of(args.runs.begin(), args.runs.end(), [](const std::string& r) { return r.starts_with("@"); });
    if (references) {
      if (!fs::exists(file)) throw std::runtime_error(fmt::format("{}: no history here to resolve references in (--history PATH)", file.string()));
      store.emplace(file);
      note_migration(*store);
    }
    // Directories first: the series they name is the one the references are resolved in.
    std::vector<std::optional<history::RunRecord>> loaded(args.runs.size());
    auto series = args.series;
    for (std::size_t i = 0; i < args.runs.size(); ++i)
      if (!args.runs[i].starts_with("@")) {
        loaded[i] = load_run(args.runs[i], nullptr, "");
        if (series.empty()) series = loaded[i]->series;
      }
    if (series.empty() && store) {
      const auto names = store->series_names();
      if (names.size() != 1) throw std::runtime_error(fmt::format("the history holds {} series; say which with --series NAME", names.size()));
      series = names.front();
    }
    std::vector<history::RunRecord> runs;
    for (std::size_t i = 0; i < args.runs.size(); ++i) {
      if (loaded[i]) runs.push_back(std::move(*loaded[i]));
      else if (args.runs[i] == "@each-machine")
        for (const auto& id : store->newest_on_each_machine(series)) runs.push_back(*store->load(id));
      else runs.push_back(load_run(args.runs[i], &*store, series));
    }
    view = history::across(runs, args.reference - 1);
  } catch (const std::exception& e) {  // a reference that names no run, runs of two series, a damaged file
    log::error("{}", e.what());
    return bad_input;
  }
  fmt::print("{}", history::terminal_text(view, ::isatty(STDOUT_FILENO)));
  try {
    if (args.json) util::write_atomically(*args.json, history::to_json(view).dump(2) + "\n");
    if (args.html) util::write_atomically(*args.html, history::html(view));
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return cannot_write;
  }
  return ok;
}

}  // namespace expr::cli
