// Comparing two runs: the statistics, the structure, and the reports.
#include "history/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/noise.hpp"
#include "report/html_report.hpp"
#include "report/plot.hpp"
#include "report/table.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace expr::history {

std::string_view to_string(Change c) {
  switch (c) {
    case Change::faster: return "faster";
    case Change::slower: return "slower";
    case Change::same: return "same";
    case Change::inconclusive: return "inconclusive";
  }
  return "?";
}

namespace {

// The reason of a timing whose change the baseline alone makes (baseline_stands_out).
constexpr const char* baseline_alone =
    "against the run just before the baseline on this machine, the baseline moved beyond the noise floor and the candidate did not: "
    "the baseline was an outlier, or the candidate undoes a change that only the baseline shows (a further run tells which)";

}  // namespace

std::size_t Comparison::count(Change change) const {
  return static_cast<std::size_t>(std::count_if(timings.begin(), timings.end(), [&](const auto& t) { return t.verdict == change; }));
}

std::size_t Comparison::blind() const {
  return static_cast<std::size_t>(std::count_if(timings.begin(), timings.end(), [](const auto& t) { return t.detectable > t.threshold; }));
}

std::size_t Comparison::structural_regressions() const {
  return static_cast<std::size_t>(std::count_if(structure.begin(), structure.end(), [](const auto& s) { return s.regression; }));
}

bool Comparison::regression() const {
  return count(Change::slower) > 0 || !failed.empty() || !missing.empty() || (structure_gated && structural_regressions() > 0);
}

std::vector<TimingKey> Comparison::to_measure_again() const {
  std::vector<TimingKey> out;
  // Inconclusive only where more samples could settle it: too few for the test or the interval, or
  // a noise floor within the threshold. A timing whose noise alone is beyond its threshold stays
  // inconclusive however often it is measured again; so does one whose noise between runs is
  // unknown (another measurement of this run adds no run to the history), and one whose baseline
  // stands out alone, which a later run tells about, not more samples of this one.
  for (const auto& t : timings) {
    const bool noise_known = std::isfinite(t.floor);
    const bool too_few = std::isinf(t.detectable) || !std::isfinite(t.interval.low) || !std::isfinite(t.interval.high);
    const bool settleable =
        t.verdict == Change::inconclusive && noise_known && t.reason != baseline_alone && (too_few || t.floor <= t.threshold);
    if (t.verdict == Change::slower || settleable) out.push_back({t.experiment, t.metric});
  }
  return out;
}

void judge_second_measurement(const Comparison& first, Comparison& again, const std::vector<TimingKey>& taken) {
  // Looked up by (experiment, metric): a sweep's comparison holds two timings a point, tens of
  // thousands in a large one.
  using Key = std::pair<std::string, std::string>;
  std::map<Key, const TimingComparison*> first_by_key;
  for (const auto& t : first.timings) first_by_key.emplace(Key{t.experiment, t.metric}, &t);
  std::set<Key> measured_again;
  for (const auto& key : taken) measured_again.emplace(key.experiment, key.metric);
  for (auto& a : again.timings) {
    const Key key{a.experiment, a.metric};
    const auto found = first_by_key.find(key);
    if (found == first_by_key.end()) continue;
    const auto* f = found->second;
    if (!measured_again.count(key)) {
      a = *f;
      continue;
    }
    if (f->verdict != Change::slower) continue;
    if (a.verdict == Change::slower)
      again.notes.push_back(fmt::format("{} {}: slower in both measurements ({:+.2f}%, then {:+.2f}%)", f->experiment, f->metric, 100 * f->change,
                                        100 * a.change));
    else
      again.notes.push_back(fmt::format("{} {}: slower at first ({:+.2f}%), {} measured once more ({:+.2f}%): not a regression until two "
                                        "measurements show it",
                                        f->experiment, f->metric, 100 * f->change, to_string(a.verdict), 100 * a.change));
  }
}

namespace {

// The structural figures of one experiment that differ.
void compare_structure(const ExperimentRecord& b, const ExperimentRecord& c, std::vector<StructuralChange>& out, std::vector<std::string>& notes) {
  if (!b.structure.traced || !c.structure.traced) {
    if (b.structure.traced != c.structure.traced)
      notes.push_back(fmt::format("{}: only the {} has a trace; its structure is not compared", c.identity, b.structure.traced ? "baseline" : "candidate"));
    return;
  }
  std::vector<std::string> names;
  for (const auto* s : {&b.structure, &c.structure})
    for (const auto& f : s->figures)
      if (std::find(names.begin(), names.end(), f.name) == names.end()) names.push_back(f.name);
  // The device's figures first (where a copy or kernel shows), then framework ops, then ranges.
  std::stable_sort(names.begin(), names.end(), [](const auto& l, const auto& r) { return analysis::source_of(l) < analysis::source_of(r); });
  for (const auto& name : names) {
    if (!b.structure.covers(name) || !c.structure.covers(name)) continue;  // e.g. ops traced on one side only
    const auto* bf = b.structure.find(name);
    const auto* cf = c.structure.find(name);
    const auto worse = analysis::worse_when(name);
    const std::variant<double, std::string> none = worse == analysis::Worse::changed ? std::variant<double, std::string>(std::string("—"))
                                                                                     : std::variant<double, std::string>(0.0);
    const auto& bv = bf ? bf->value : none;
    const auto& cv = cf ? cf->value : none;
    bool differs = false, regression = true;
    if (std::holds_alternative<double>(bv) && std::holds_alternative<double>(cv)) {
      const double x = std::get<double>(bv), y = std::get<double>(cv);
      differs = std::fabs(x - y) > 1e-9 * std::max(std::fabs(x), std::fabs(y));
      regression = worse == analysis::Worse::less ? y < x : worse == analysis::Worse::more ? y > x : true;
    } else {
      differs = analysis::figure_text(name, bv) != analysis::figure_text(name, cv);
    }
    if (!differs) continue;
    std::string detail = cf && !cf->detail.empty() ? cf->detail : bf ? bf->detail : "";
    if (worse == analysis::Worse::less && std::holds_alternative<double>(bv) && std::holds_alternative<double>(cv))
      out.push_back({c.identity, name, util::format_percent(std::get<double>(bv)), util::format_percent(std::get<double>(cv)), detail, regression});
    else
      out.push_back({c.identity, name, analysis::figure_text(name, bv), analysis::figure_text(name, cv), detail, regression});
  }
}

// Where the median lies, from the order statistics of the samples, widened by half the smallest
// step between distinct values: a quantised timer (every sample a multiple of its resolution) makes
// a median interval of zero width, which says nothing of where the median lies within one step.
// Nothing when the samples are too few for the interval to reach its confidence or all equal (the
// resolution unknown); the reason then says which.
std::optional<util::Interval> sample_interval(const outcome::Stats& s, std::string& reason) {
  const auto needed = util::median_interval_min_samples(analysis::timing_confidence);
  if (s.samples.size() < needed) {
    reason = fmt::format("{} sample{}: {} are needed to bound a median at {}", s.samples.size(), s.samples.size() == 1 ? "" : "s", needed,
                         util::format_percent(analysis::timing_confidence));
    return std::nullopt;
  }
  auto sorted = s.samples;
  std::sort(sorted.begin(), sorted.end());
  double step = INFINITY;
  for (std::size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i] > sorted[i - 1]) step = std::min(step, sorted[i] - sorted[i - 1]);
  if (!std::isfinite(step)) {
    reason = fmt::format("all {} samples equal {}: the timer's resolution, and so where the median lies, is unknown", sorted.size(),
                         util::format_duration(sorted.front()));
    return std::nullopt;
  }
  const auto i = util::median_interval(std::move(sorted), analysis::timing_confidence);
  return util::Interval{i.low - step / 2, i.high + step / 2};
}

// How far a run's figure moves as the processes alone tell it, each figure the mean of its Rb or Rc
// rounds: processes.sigma sqrt((1/Rb + 1/Rc) / 2), so that their difference moves sqrt(2) times
// that; unknown where the processes' noise is.
analysis::Noise from_processes(const TimingComparison& t) {
  if (!t.processes.known()) return {};
  const double rounds = 1.0 / static_cast<double>(t.base_rounds) + 1.0 / static_cast<double>(t.candidate_rounds);
  return {t.processes.sigma * std::sqrt(rounds / 2), t.processes.df};
}

// Sets the comparison's noise from the two estimates of how far a run's figure moves: the one whose
// bound at Student's quantile q reaches further (analysis::further_reaching); unknown without the
// estimate between runs.
void choose_noise(TimingComparison& t, const analysis::Noise& processes, const std::string& process_sources, const analysis::Noise& runs,
                  const std::string& run_sources, double q) {
  if (!runs.known()) {
    t.noise = {};
    t.noise_sources.clear();
    return;
  }
  const bool processes_further = processes.known() && analysis::reach(processes, q) > analysis::reach(runs, q);
  t.noise = processes_further ? processes : runs;
  t.noise_sources = processes_further ? "between processes: " + process_sources : "between runs: " + run_sources;
}

// How far below and above log(candidate median / base median) each median's interval from its
// samples puts it, combined; the reason where the samples cannot bound it.
void set_sample_reach(const outcome::Stats& b, const outcome::Stats& c, TimingComparison& t) {
  const auto bi = sample_interval(b, t.reason);
  const auto ci = bi ? sample_interval(c, t.reason) : std::nullopt;
  if (!bi || !ci || bi->low <= 0 || ci->low <= 0) return;
  t.samples_below = std::hypot(std::log(c.median / ci->low), std::log(bi->high / b.median));
  t.samples_above = std::hypot(std::log(ci->high / c.median), std::log(b.median / bi->low));
}

// The interval of the change at analysis::timing_confidence: the samples' reach combined in log
// space with the t interval of the difference of the two figures where their noise is known
// (between processes only, where the noise between runs is not). Set again once decide has chosen
// the noise, so that the interval a "same" rests on is the one the floor's noise gives.
void set_interval(TimingComparison& t) {
  const auto figure = t.noise.known() ? t.noise : from_processes(t);
  const double between = figure.known() ? analysis::reach(figure, analysis::two_sided_quantile) * std::sqrt(2.0) : 0.0;
  const double center = std::log(t.candidate_median / t.base_median);
  t.interval = {std::expm1(center - std::hypot(t.samples_below, between)), std::expm1(center + std::hypot(t.samples_above, between))};
}

// "rounds, history": the sources with an estimate.
std::string known_sources(const std::vector<std::pair<const char*, analysis::Noise>>& sources) {
  std::vector<std::string> names;
  for (const auto& [name, estimate] : sources)
    if (estimate.known()) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string sample_counts(const TimingComparison& t) {
  return t.base_samples == t.candidate_samples ? fmt::format("{} sample{} a side", t.base_samples, t.base_samples == 1 ? "" : "s")
                                               : fmt::format("{} and {} samples", t.base_samples, t.candidate_samples);
}

// A change that the baseline alone makes: against the run just before the baseline, the baseline
// moved beyond the noise floor, the other way than the change, and the candidate not beyond the
// floor and the threshold, so the candidate is where the machine was before the baseline. A run
// that falls into a machine's other state for its whole length looks so as the baseline (the CI
// machine's host times take one of two levels for seconds at a time); so does a candidate that
// undoes a change only the baseline shows, which one run cannot tell apart.
bool baseline_stands_out(const TimingComparison& t) {
  if (!std::isfinite(t.base_from_before)) return false;
  const bool base_moved = std::fabs(t.base_from_before) > t.floor && (t.base_from_before > 0) != (t.round_change > 0);
  return base_moved && std::fabs(t.candidate_from_before) <= std::max(t.floor, t.threshold);
}

}  // namespace

TimingComparison test_timing(const std::string& experiment, const std::string& metric, const outcome::Stats& base,
                             const outcome::Stats& candidate, const PointHistory& history) {
  TimingComparison t;
  t.experiment = experiment;
  t.metric = metric;
  t.base_median = base.median;
  t.candidate_median = candidate.median;
  t.base_samples = base.samples.size();
  t.candidate_samples = candidate.samples.size();
  t.base_rounds = analysis::round_medians(base).size();
  t.candidate_rounds = analysis::round_medians(candidate).size();
  t.change = t.candidate_median / t.base_median - 1;
  t.round_change = std::expm1(analysis::log_figure(candidate) - analysis::log_figure(base));
  if (std::isfinite(history.before_base)) {
    t.base_from_before = std::expm1(analysis::log_figure(base) - history.before_base);
    t.candidate_from_before = std::expm1(analysis::log_figure(candidate) - history.before_base);
  }
  t.p = util::mann_whitney_p(base.samples, candidate.samples);
  t.min_p = util::mann_whitney_min_p(t.base_samples, t.candidate_samples);

  // Between the processes of a run: both runs' rounds and the history's.
  const auto rounds = analysis::pool({analysis::between_processes(base), analysis::between_processes(candidate)});
  t.processes = analysis::pool({rounds, history.processes});
  t.process_sources = known_sources({{"rounds", rounds}, {"history", history.processes}});
  // Between runs: the history's and the calibration's (both runs carry the same calibration when
  // made after it; the newer run's is the newer one).
  const auto calibration = analysis::calibrated(candidate).known() ? analysis::calibrated(candidate) : analysis::calibrated(base);
  t.runs = analysis::pool({history.runs, calibration});
  t.run_sources = known_sources({{"history", history.runs}, {"calibration", calibration}});
  choose_noise(t, from_processes(t), t.process_sources, t.runs, t.run_sources, analysis::two_sided_quantile);
  set_sample_reach(base, candidate, t);
  set_interval(t);
  return t;
}

double noise_floor(const analysis::Noise& noise, std::size_t tests, double alpha) {
  if (!noise.known()) return INFINITY;
  if (noise.sigma <= 0) return 0;
  const double t = util::student_t_quantile(1 - alpha / (2 * static_cast<double>(std::max<std::size_t>(1, tests))), noise.df);
  return std::expm1(t * noise.sigma * std::sqrt(2.0));
}

void decide(std::vector<TimingComparison>& tests, const std::map<std::string, double>& thresholds, double alpha) {
  std::vector<double> p;
  for (const auto& t : tests) p.push_back(t.p);
  const auto adjusted = util::holm_adjust(p);
  // Holm rejects a test at alpha/m at its first step whatever the others say: a test whose smallest
  // p cannot reach that may never find anything.
  const double first_step = alpha / static_cast<double>(std::max<std::size_t>(1, tests.size()));
  // A point whose few rounds or runs happen to agree understates how far its figure moves: host
  // times move between a few states, and three rounds can all land in one (on the H200 sdpa_cudnn's
  // host_time read 15, 15 and 15 µs in one run and 25, 28 and 22 in the next). So no point is taken
  // as quieter than its metric's noise pooled over every point of the comparison.
  std::map<std::string, std::vector<analysis::Noise>> process_estimates, run_estimates;
  for (const auto& t : tests) {
    if (const auto p = from_processes(t); p.known()) process_estimates[t.metric].push_back(p);
    if (t.runs.known()) run_estimates[t.metric].push_back(t.runs);
  }
  const auto at_least_pooled = [](analysis::Noise own, std::string sources, const std::vector<analysis::Noise>& all) {
    if (const auto pooled = analysis::pool(all); own.known() && pooled.sigma > own.sigma) return std::pair{pooled, std::string("every point's, pooled")};
    return std::pair{own, sources};
  };
  const double quantile = 1 - alpha / (2 * static_cast<double>(std::max<std::size_t>(1, tests.size())));
  for (std::size_t i = 0; i < tests.size(); ++i) {
    auto& t = tests[i];
    const auto [processes, process_sources] = at_least_pooled(from_processes(t), t.process_sources, process_estimates[t.metric]);
    const auto [runs, run_sources] = at_least_pooled(t.runs, t.run_sources, run_estimates[t.metric]);
    choose_noise(t, processes, process_sources, runs, run_sources, quantile);
    set_interval(t);
    t.p_adjusted = adjusted[i];
    t.threshold = thresholds.count(t.metric) ? thresholds.at(t.metric) : 0.0;
    t.floor = noise_floor(t.noise, tests.size(), alpha);
    const bool testable = t.min_p <= first_step;
    t.detectable = testable ? std::max(t.threshold, t.floor) : INFINITY;
    const bool bounded = std::isfinite(t.interval.low) && std::isfinite(t.interval.high);
    const bool significant = t.p_adjusted <= alpha;  // at alpha itself too, as statsmodels
    const bool beyond_floor = std::fabs(t.round_change) > t.floor && (t.round_change > 0) == (t.change > 0);
    const bool changed = significant && std::fabs(t.change) > t.threshold && beyond_floor;
    if (changed && baseline_stands_out(t)) {
      t.verdict = Change::inconclusive;
      t.reason = baseline_alone;
    } else if (changed) {
      t.verdict = t.change > 0 ? Change::slower : Change::faster;
      t.reason.clear();
    } else if (!testable) {
      t.verdict = Change::inconclusive;
      t.reason = fmt::format("{}: the U test's smallest p here, {}, cannot reach {} (alpha over {} test{})", sample_counts(t), util::format_number(t.min_p, 2),
                             util::format_number(first_step, 2), tests.size(), tests.size() == 1 ? "" : "s");
    } else if (t.noise.known() && bounded && t.interval.low >= -t.threshold && t.interval.high <= t.threshold) {
      // Only with the noise between runs known: a machine slower by 10% for the whole candidate
      // run can hide a 10% speed-up as well as make one up.
      t.verdict = Change::same;
      t.reason.clear();
    } else {
      t.verdict = Change::inconclusive;
      if (!bounded) continue;  // the reason test_timing gave: too few samples, or all equal
      if (!t.noise.known())
        t.reason = "noise between runs unknown: fewer than two other runs of it on this machine in the history, and no calibration "
                   "(expr calibrate measures it)";
      else if (significant && std::fabs(t.change) > t.threshold)
        t.reason = fmt::format("the change is within the noise floor {} (sigma {}, {} df, {})", util::format_percent(t.floor),
                               util::format_percent(t.noise.sigma), util::format_number(t.noise.df), t.noise_sources);
      else
        t.reason = fmt::format("the interval reaches beyond ±{} and the change is not significant (p {} after Holm)", util::format_percent(t.threshold),
                               util::format_number(t.p_adjusted, 2));
    }
  }
}

PointHistory history_noise(const std::vector<outcome::Stats>& runs) {
  std::vector<analysis::Noise> processes;
  for (const auto& r : runs)
    if (r.median > 0) processes.push_back(analysis::between_processes(r));
  return {analysis::pool(processes), analysis::between_runs(runs)};
}

void learn_history(const PointRuns& runs, CompareOptions& options) {
  for (const auto& [point, stats] : runs) {
    const auto noise = history_noise(stats);
    if (noise.processes.known() || noise.runs.known()) options.history[point] = noise;
  }
}

void check_same_series(const std::string& base_series, const std::string& candidate_series) {
  if (base_series != candidate_series)
    throw Incomparable(fmt::format("refusing to compare runs of different series: the baseline is a run of {}, the candidate of {}. "
                                   "A gate is the same series measured again; compare with a run of {} (@last-good, or its run directory)",
                                   base_series, candidate_series, candidate_series));
}

Comparison compare(const RunRecord& base, const RunRecord& candidate, const CompareOptions& options) {
  check_same_series(base.series, candidate.series);
  Comparison out;
  out.series = candidate.series;
  out.base = {base.id, base.revision, base.started, base.run_dir, base.series_file};
  out.candidate = {candidate.id, candidate.revision, candidate.started, candidate.run_dir, candidate.series_file};
  out.thresholds = candidate.gates.thresholds;
  for (const auto& [metric, t] : options.thresholds) out.thresholds[metric] = t;
  out.structure_gated = options.structure.value_or(candidate.gates.structure);
  out.alpha = options.alpha;

  out.environment = environment_differences(base.environment, candidate.environment);
  std::string machine;
  for (const auto& d : out.environment)
    if (d.machine) machine += fmt::format("\n  {}: {} (baseline) vs {} (candidate)", d.key, d.base.empty() ? "(none)" : d.base,
                                          d.candidate.empty() ? "(none)" : d.candidate);
  if (!machine.empty() && !options.across_environments)
    throw EnvironmentMismatch(fmt::format("refusing to compare runs from different machines; their timings are different quantities:{}\n"
                                          "(--across-environments compares them anyway, with this difference shown)",
                                          machine));

  for (const auto& b : base.experiments)
    if (!candidate.find(b.identity)) out.missing.push_back(b.identity);
  if (out.missing.size() == base.experiments.size()) {
    std::vector<std::string> candidates;
    for (const auto& c : candidate.experiments) candidates.push_back(c.identity);
    throw Incomparable(fmt::format("refusing to compare: the runs have no experiment in common (renamed?), so there is nothing to gate.\n"
                                   "  the baseline's: {}\n  the candidate's: {}",
                                   out.missing.empty() ? std::string("none") : fmt::format("{}", fmt::join(out.missing, ", ")),
                                   candidates.empty() ? std::string("none") : fmt::format("{}", fmt::join(candidates, ", "))));
  }
  for (const auto& c : candidate.experiments) {
    const auto* b = base.find(c.identity);
    if (!b) {
      out.notes.push_back(fmt::format("{}: in the candidate only", c.identity));
      continue;
    }
    if (b->params != c.params) {
      std::string changed;
      for (const auto& [k, v] : c.params)
        if (const auto it = b->params.find(k); it == b->params.end() || it->second != v)
          changed += fmt::format("{}{} {} → {}", changed.empty() ? "" : ", ", k, it == b->params.end() ? "(none)" : it->second, v);
      out.notes.push_back(fmt::format("{}: parameters differ: {}", c.identity, changed));
    }
    if (b->status != outcome::Status::ok || c.status != outcome::Status::ok) {
      if (b->status == outcome::Status::ok)
        out.failed.push_back(fmt::format("{}: ran in the baseline, {} in the candidate{}", c.identity, outcome::to_string(c.status),
                                         c.reason.empty() ? "" : ": " + c.reason));
      else
        out.notes.push_back(fmt::format("{}: {} in the baseline; not compared", c.identity, outcome::to_string(b->status)));
      continue;
    }
    for (const auto& metric : series::gated_metrics) {
      const auto bt = b->timings.find(metric), ct = c.timings.find(metric);
      if (bt == b->timings.end() || ct == c.timings.end()) continue;
      if (bt->second.samples.empty() || ct->second.samples.empty() || bt->second.median <= 0 || ct->second.median <= 0) {
        out.notes.push_back(fmt::format("{} {}: no raw samples on one side (a run recorded before expr kept them); not tested", c.identity, metric));
        continue;
      }
      const auto history = options.history.find({c.identity, metric});
      out.timings.push_back(test_timing(c.identity, metric, bt->second, ct->second,
                                        history == options.history.end() ? PointHistory{} : history->second));
    }
    compare_structure(*b, c, out.structure, out.notes);
  }

  decide(out.timings, out.thresholds, out.alpha);
  if (std::any_of(out.timings.begin(), out.timings.end(), [](const auto& t) { return t.reason == baseline_alone; }))
    out.notes.push_back(fmt::format("the run just before the baseline on this machine: {}", options.run_before_base));
  return out;
}

namespace {

// "+19.95%", "-0.01%": a change is read to a hundredth of a percent.
std::string signed_percent(double fraction) {
  if (!std::isfinite(fraction)) return fraction > 0 ? "+∞" : "-∞";
  return fmt::format("{:+.2f}%", 100 * fraction);
}

std::string p_text(double p) { return p < 1e-6 ? "<1e-6" : fmt::format("{:.2g}", p); }

// A regex that matches exactly this identity, quoted for a POSIX shell.
std::string filter_for(const std::string& identity) {
  const auto re = util::exactly({identity});
  std::string quoted = "'";
  for (char ch : re) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

// "0.52% (12 df, between runs: history, calibration)", or "unknown".
std::string noise_text(const TimingComparison& x) {
  if (!x.noise.known()) return "unknown";
  return fmt::format("{} ({} df, {})", util::format_percent(x.noise.sigma), util::format_number(x.noise.df), x.noise_sources);
}

std::string detectable_text(const TimingComparison& x) { return std::isfinite(x.detectable) ? util::format_percent(x.detectable) : "none"; }

// Every timing, or only those called slower or faster (`changes_only`).
report::Table timing_table(const Comparison& c, bool changes_only = false) {
  report::Table t{{"experiment", "metric", "baseline", "candidate", "rounds", "change", fmt::format("{} interval", util::format_percent(analysis::timing_confidence)),
                   "p (Holm)", "noise between runs", "threshold", "detectable", "verdict"},
                  {}};
  for (const auto& x : c.timings) {
    if (changes_only && x.verdict != Change::slower && x.verdict != Change::faster) continue;
    t.rows.push_back({x.experiment, x.metric, util::format_duration(x.base_median), util::format_duration(x.candidate_median),
                      fmt::format("{} / {}", x.base_rounds, x.candidate_rounds), signed_percent(x.change),
                      signed_percent(x.interval.low) + " .. " + signed_percent(x.interval.high), p_text(x.p_adjusted), noise_text(x),
                      util::format_percent(x.threshold), detectable_text(x), std::string(to_string(x.verdict))});
  }
  return t;
}

// Why the inconclusive timings are, one line a reason with the timings it holds for (the first
// three named): a sweep's first nights would otherwise repeat "noise between runs unknown" for
// every point.
std::vector<std::string> inconclusive_reasons(const Comparison& c) {
  std::vector<std::pair<std::string, std::vector<std::string>>> reasons;  // in the order they first appear
  for (const auto& x : c.timings) {
    if (x.verdict != Change::inconclusive) continue;
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == x.reason; });
    if (it == reasons.end()) it = reasons.insert(reasons.end(), {x.reason, {}});
    it->second.push_back(x.experiment + " " + x.metric);
  }
  std::vector<std::string> out;
  for (const auto& [reason, timings] : reasons) {
    constexpr std::size_t named = 3;
    std::vector<std::string> first(timings.begin(), timings.begin() + static_cast<std::ptrdiff_t>(std::min(named, timings.size())));
    const auto more = timings.size() > named ? fmt::format(" and {} more", timings.size() - named) : std::string();
    out.push_back(fmt::format("{}{}: inconclusive: {}", fmt::join(first, ", "), more, reason));
  }
  return out;
}

report::Table structure_table(const Comparison& c) {
  report::Table t{{"experiment", "figure", "baseline", "candidate", "in the trace", "verdict"}, {}};
  for (const auto& s : c.structure)
    t.rows.push_back({s.experiment, s.figure, s.base, s.candidate, s.detail, s.regression ? "regression" : "improvement"});
  return t;
}

std::string method(const Comparison& c) {
  std::string thresholds;
  for (const auto& [metric, t] : c.thresholds) thresholds += fmt::format("{}{} {}", thresholds.empty() ? "" : ", ", metric, util::format_percent(t));
  return fmt::format("Mann-Whitney U test on the raw samples of each experiment and timing, Holm's correction over {} test{} "
                     "(family-wise alpha {}); a change counts when significant and beyond its threshold ({}) and its noise floor, "
                     "exp(t(1 - alpha/2m, df) sigma sqrt(2)) - 1, sigma the noise of log(figure) between runs (a figure: the "
                     "geometric mean of a run's round medians): the history's other runs and the calibration, or the rounds' "
                     "spread between processes where its bound reaches further; unknown noise never counts. Detectable: the smallest change "
                     "each comparison could call slower or faster. Structural changes {} the gate.",
                     c.timings.size(), c.timings.size() == 1 ? "" : "s", util::format_percent(c.alpha), thresholds,
                     c.structure_gated ? "fail" : "do not fail");
}

// The command that measures one regressed experiment again, for each.
std::vector<std::string> reproduce(const Comparison& c) {
  std::vector<std::string> experiments;
  const auto add = [&](const std::string& e) {
    if (std::find(experiments.begin(), experiments.end(), e) == experiments.end()) experiments.push_back(e);
  };
  for (const auto& t : c.timings)
    if (t.verdict == Change::slower) add(t.experiment);
  if (c.structure_gated)
    for (const auto& s : c.structure)
      if (s.regression) add(s.experiment);
  std::vector<std::string> out;
  const auto file = c.candidate.series_file.empty() ? std::string("SERIES.yaml") : c.candidate.series_file;
  for (const auto& e : experiments) out.push_back(fmt::format("expr run {} --filter {}", file, filter_for(e)));
  return out;
}

std::string environment_text(const Comparison& c, const std::string& bullet) {
  std::string out;
  for (const auto& d : c.environment)
    out += fmt::format("{}{}{}: {} → {}\n", bullet, d.machine ? "DIFFERENT MACHINE: " : "", d.key, d.base.empty() ? "(none)" : d.base,
                       d.candidate.empty() ? "(none)" : d.candidate);
  return out;
}

std::string label(const RunLabel& r) {
  return fmt::format("{} (revision {}, started {}{})", r.id, r.revision.empty() ? "?" : r.revision, r.started,
                     r.run_dir.empty() ? "" : ", " + r.run_dir);
}

}  // namespace

std::string verdict_line(const Comparison& c) {
  const auto summary = fmt::format("{} slower, {} faster, {} same, {} inconclusive ({} of {} timing{} could not detect a change of "
                                   "their threshold's size); {} structural regression{}, {} improvement{}{}{}",
                                   c.count(Change::slower), c.count(Change::faster), c.count(Change::same), c.count(Change::inconclusive),
                                   c.blind(), c.timings.size(), c.timings.size() == 1 ? "" : "s",
                                   c.structural_regressions(), c.structural_regressions() == 1 ? "" : "s",
                                   c.structure.size() - c.structural_regressions(), c.structure.size() - c.structural_regressions() == 1 ? "" : "s",
                                   c.failed.empty() ? "" : fmt::format("; {} failed", c.failed.size()),
                                   c.missing.empty() ? "" : fmt::format("; {} missing from the candidate", c.missing.size()));
  return fmt::format("{}: {}", c.regression() ? "REGRESSION, the gate fails" : "no regression, the gate passes", summary);
}

std::string terminal_text(const Comparison& c, bool color) {
  const auto paint = [color](const std::string& s, const char* code) { return color ? fmt::format("\033[{}m{}\033[0m", code, s) : s; };
  std::string out = fmt::format("\nexpr compare — series {}\n  baseline   {}\n  candidate  {}\n\n{}\n", c.series, label(c.base), label(c.candidate),
                                method(c));
  if (!c.timings.empty()) out += "\n" + timing_table(c).text("  ");
  for (const auto& r : inconclusive_reasons(c)) out += "  " + r + "\n";
  if (!c.structure.empty()) out += "\nstructure of the trace:\n" + structure_table(c).text("  ");
  else out += "\nstructure of the trace: no change\n";
  for (const auto& f : c.failed) out += "  " + paint("failed: ", "31") + f + "\n";
  for (const auto& m : c.missing) out += "  " + paint("missing: ", "31") + m + ": in the baseline, not in the candidate\n";
  if (!c.environment.empty()) out += "\nenvironment differences:\n" + environment_text(c, "  ");
  for (const auto& n : c.notes) out += "  note: " + n + "\n";
  out += "\n" + paint(verdict_line(c), c.regression() ? "31" : "32") + "\n";
  const auto commands = reproduce(c);
  if (!commands.empty()) out += "measure a regressed experiment again:\n";
  for (const auto& cmd : commands) out += "  " + cmd + "\n";
  return out;
}

std::string markdown(const Comparison& c) {
  std::string out = fmt::format("## Against the baseline\n\nSeries `{}`.\n\n- baseline: {}\n- candidate: {}\n\n{}\n\n", c.series, label(c.base),
                                label(c.candidate), method(c));
  out += fmt::format("**{}**\n\n", verdict_line(c));
  if (!c.timings.empty()) out += "### Timings\n\n" + timing_table(c).markdown() + "\n";
  for (const auto& r : inconclusive_reasons(c)) out += "- " + r + "\n";
  out += "### Structure of the trace\n\n";
  out += c.structure.empty() ? "No change.\n\n" : structure_table(c).markdown() + "\n";
  for (const auto& f : c.failed) out += "- failed: " + f + "\n";
  for (const auto& m : c.missing) out += "- missing: " + m + ": in the baseline, not in the candidate\n";
  if (!c.environment.empty()) out += "### Environment differences\n\n" + environment_text(c, "- ") + "\n";
  for (const auto& n : c.notes) out += "- note: " + n + "\n";
  const auto commands = reproduce(c);
  if (!commands.empty()) {
    out += "\n### Measure a regressed experiment again\n\n```sh\n";
    for (const auto& cmd : commands) out += cmd + "\n";
    out += "```\n";
  }
  return out;
}

std::string html_section(const Comparison& c) {
  using report::plot::escape;
  const auto items = [](const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += "<li>" + escape(l) + "</li>\n";
    return out.empty() ? out : "<ul>\n" + out + "</ul>\n";
  };
  std::string out = fmt::format("<p class=\"{}\">{}</p>\n<p class=\"meta\">Baseline {}; this run {}.</p>\n<p class=\"meta\">{}</p>\n",
                                c.regression() ? "gate-fails" : "gate-passes", escape(verdict_line(c)), escape(label(c.base)),
                                escape(label(c.candidate)), escape(method(c)));
  if (c.count(Change::slower) + c.count(Change::faster) > 0) out += "<h3>Timings called slower or faster</h3>\n" + report::html_table(timing_table(c, true));
  out += fmt::format("<p class=\"meta\">{} of {} timings the same, {} inconclusive; the terminal's table and the Markdown (a gated run's <code>summary.md</code>, <code>expr compare --markdown</code>) list every one.</p>\n",
                     c.count(Change::same), c.timings.size(), c.count(Change::inconclusive));
  out += items(inconclusive_reasons(c));
  std::vector<std::string> more;
  for (const auto& f : c.failed) more.push_back("failed: " + f);
  for (const auto& m : c.missing) more.push_back("missing: " + m + ": in the baseline, not in the candidate");
  for (const auto& n : c.notes) more.push_back("note: " + n);
  out += items(more);
  out += c.structure.empty() ? "<h3>Structure of the trace</h3>\n<p>No change.</p>\n"
                             : "<h3>Structure of the trace</h3>\n" + report::html_table(structure_table(c));
  const auto commands = reproduce(c);
  if (!commands.empty()) out += "<h3>Measure a regressed experiment again</h3>\n<pre><code>" + escape(fmt::format("{}", fmt::join(commands, "\n"))) + "</code></pre>\n";
  return out;
}

std::string html(const Comparison& c) {
  using report::plot::escape;
  return report::html_page(c.series + " — expr compare",
                           fmt::format("<header>\n<h1>{}: a candidate against its baseline</h1>\n</header>\n<section id=\"gate\">\n{}</section>\n",
                                       escape(c.series), html_section(c)));
}

}  // namespace expr::history
