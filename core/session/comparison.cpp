// Comparing runs: compare, across, history, and the gate's options.
#include "session/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "session/places.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"

namespace expr::session {

namespace fs = std::filesystem;

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
                         options);
  // Only where both runs are of one machine: across machines the candidate's figure is another
  // quantity than that run's.
  const auto machine = history::machine_fingerprint(base.environment);
  if (machine != history::machine_fingerprint(candidate.environment)) return;
  const auto before = store.timings_before(base.series, machine, base.id, base.started, {base.id, candidate.id});
  if (!before) return;
  options.run_before_base = before->run;
  for (const auto& [point, stats] : before->timings)
    if (stats.median > 0) options.history[point].before_base = analysis::log_figure(stats);
}

namespace {

// The only series in `store`, for references when none is named; throws when it holds several.
std::string only_series(history::Store& store) {
  const auto names = store.series_names();
  if (names.size() != 1) throw std::runtime_error(fmt::format("the history holds {} series; say which with --series NAME", names.size()));
  return names.front();
}

// The history for `compare`: needed to resolve references; otherwise used, where there is one, to
// tell how far each point moves between processes (two run directories still compare without it).
std::unique_ptr<history::Store> history_for_compare(const CompareArgs& args) {
  const auto file = args.history.value_or(default_history());
  const bool references = args.base.starts_with("@") || args.candidate.starts_with("@");
  if (references && !fs::exists(file))
    throw std::runtime_error(fmt::format("{}: no history here to resolve references in (--history PATH)", file.string()));
  if (!fs::exists(file)) return nullptr;
  try {
    return open_history(file);
  } catch (const std::runtime_error& e) {
    if (references) throw;
    log::warn("{}; the comparison learns nothing from it", e.what());
    return nullptr;
  }
}

}  // namespace

Compared compare(const CompareArgs& args) {
  auto options = gate_options(args.gate);
  Compared c;
  // A reference that names no run, another machine, a damaged file.
  c.comparison = or_stop(Status::bad_input, [&] {
    const auto store = history_for_compare(args);
    // The candidate first: a reference for the baseline is resolved within its series.
    auto series = args.series;
    if (series.empty() && args.candidate.starts_with("@") && store) series = only_series(*store);
    const auto candidate = load_run(args.candidate, store.get(), series);
    const auto base = load_run(args.base, store.get(), candidate.series);
    if (base.id == candidate.id) throw std::runtime_error(fmt::format("{} and {} are the same run, {}", args.base, args.candidate, base.id));
    if (store) learn_noise(*store, base, candidate, options);
    return history::compare(base, candidate, options);
  });
  c.status = c.comparison.regression() ? Status::regression : Status::ok;
  return c;
}

namespace {

// The runs `across` names, directories first: the series they name is the one the references are
// resolved in.
std::vector<history::RunRecord> runs_across(const AcrossArgs& args) {
  std::unique_ptr<history::Store> store;
  const auto file = args.history.value_or(default_history());
  if (std::any_of(args.runs.begin(), args.runs.end(), [](const std::string& r) { return r.starts_with("@"); })) {
    if (!fs::exists(file)) throw std::runtime_error(fmt::format("{}: no history here to resolve references in (--history PATH)", file.string()));
    store = open_history(file);
  }
  std::vector<std::optional<history::RunRecord>> loaded(args.runs.size());
  auto series = args.series;
  for (std::size_t i = 0; i < args.runs.size(); ++i)
    if (!args.runs[i].starts_with("@")) {
      loaded[i] = load_run(args.runs[i], nullptr, "");
      if (series.empty()) series = loaded[i]->series;
    }
  if (series.empty() && store) series = only_series(*store);
  std::vector<history::RunRecord> runs;
  for (std::size_t i = 0; i < args.runs.size(); ++i) {
    if (loaded[i]) runs.push_back(std::move(*loaded[i]));
    else if (args.runs[i] == "@each-machine")
      for (const auto& id : store->newest_on_each_machine(series)) runs.push_back(*store->load(id));
    else runs.push_back(load_run(args.runs[i], store.get(), series));
  }
  return runs;
}

}  // namespace

history::Across across(const AcrossArgs& args) {
  // A reference that names no run, runs of two series, a damaged file.
  return or_stop(Status::bad_input, [&] { return history::across(runs_across(args), args.reference - 1); });
}

void write_view(const fs::path& file, const std::string& text) {
  or_stop(Status::cannot_write, [&] { util::write_atomically(file, text); });
}

namespace {

// The history `expr history` reads: it must be there.
std::unique_ptr<history::Store> history_to_read(const HistoryArgs& args) {
  const auto file = args.history.value_or(default_history());
  if (!fs::exists(file))
    throw Stop(Status::bad_input, fmt::format("{}: no history here; `expr run` records one (or name it with --history PATH)", file.string()));
  return or_stop(Status::bad_input, [&] { return open_history(file); });
}

}  // namespace

RecordedRuns recorded_runs(const HistoryArgs& args) {
  const auto store = history_to_read(args);
  return or_stop(Status::bad_input, [&] { return RecordedRuns{store->file(), store->runs(args.series, args.limit)}; });
}

std::vector<history::TimingComparison> steps(const std::vector<history::Store::MetricPoint>& points, const std::string& metric,
                                             const std::map<std::string, double>& thresholds, double alpha) {
  // The runs of one machine in [from, to) but the two of the step: they are its noise from other
  // runs, between runs from the differences of consecutive runs on either side of the step.
  const auto runs_of = [&](const std::string& machine, std::size_t from, std::size_t to, std::size_t step) {
    std::vector<outcome::Stats> out;
    for (std::size_t k = from; k < to; ++k)
      if (points[k].machine == machine && k + 1 != step && k != step) out.push_back(points[k].stats);
    return out;
  };
  std::vector<history::TimingComparison> out;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto &before = points[i - 1].stats, &after = points[i].stats;
    // A step within one machine's runs only: across machines the figure is another quantity.
    if (points[i - 1].machine != points[i].machine || before.samples.empty() || after.samples.empty() || before.median <= 0 ||
        after.median <= 0)
      continue;
    const auto& machine = points[i].machine;
    history::PointHistory noise;
    noise.processes = history::history_noise(runs_of(machine, 0, points.size(), i)).processes;
    noise.runs = analysis::pool({analysis::between_runs(runs_of(machine, 0, i, i)), analysis::between_runs(runs_of(machine, i, points.size(), i))});
    out.push_back(history::test_timing(points[i].run, metric, before, after, noise));
  }
  history::decide(out, thresholds, alpha);
  return out;
}

FigureOverTime figure_over_time(const HistoryArgs& args) {
  const auto store = history_to_read(args);
  FigureOverTime f;
  f.file = store->file();
  f.series = args.series.empty() ? or_stop(Status::bad_input, [&] { return only_series(*store); }) : args.series;
  f.points = or_stop(Status::bad_input, [&] { return store->metric_over_time(f.series, args.experiment, args.metric, args.limit); });
  if (f.points.empty())
    throw Stop(Status::bad_input, fmt::format("no {} of {} in series {} in {}", args.metric, args.experiment, f.series, f.file.string()));
  const auto options = gate_options(args.gate);
  auto thresholds = series::Gates{}.thresholds;
  for (const auto& [metric, threshold] : options.thresholds) thresholds[metric] = threshold;
  f.steps = steps(f.points, args.metric, thresholds, options.alpha);
  f.threshold = thresholds.at(args.metric);
  return f;
}

}  // namespace expr::session
