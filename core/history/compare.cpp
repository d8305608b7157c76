// Comparing two runs: the statistics, the structure, and the reports.
#include "history/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/noise.hpp"
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

std::size_t Comparison::count(Change change) const {
  return static_cast<std::size_t>(std::count_if(timings.begin(), timings.end(), [&](const auto& t) { return t.verdict == change; }));
}

std::size_t Comparison::structural_regressions() const {
  return static_cast<std::size_t>(std::count_if(structure.begin(), structure.end(), [](const auto& s) { return s.regression; }));
}

bool Comparison::regression() const {
  return count(Change::slower) > 0 || !failed.empty() || !missing.empty() || (structure_gated && structural_regressions() > 0);
}

std::vector<std::string> Comparison::inconclusive_experiments() const {
  std::vector<std::string> out;
  for (const auto& t : timings)
    if (t.verdict == Change::inconclusive && std::find(out.begin(), out.end(), t.experiment) == out.end()) out.push_back(t.experiment);
  return out;
}

namespace {

std::string figure_text(const std::variant<double, std::string>& v) {
  if (const auto* d = std::get_if<double>(&v)) return util::format_number(*d);
  return std::get<std::string>(v);
}

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
      differs = figure_text(bv) != figure_text(cv);
    }
    if (!differs) continue;
    std::string detail = cf && !cf->detail.empty() ? cf->detail : bf ? bf->detail : "";
    if (worse == analysis::Worse::less && std::holds_alternative<double>(bv) && std::holds_alternative<double>(cv))
      out.push_back({c.identity, name, util::format_percent(std::get<double>(bv)), util::format_percent(std::get<double>(cv)), detail, regression});
    else
      out.push_back({c.identity, name, figure_text(bv), figure_text(cv), detail, regression});
  }
}

// The interval of log(candidate median / base median), from each median's interval.
util::Interval log_ratio_interval(const outcome::Stats& b, const outcome::Stats& c) {
  const double center = std::log(c.median / b.median);
  const auto bi = analysis::median_interval(b), ci = analysis::median_interval(c);
  if (!bi || !ci || bi->low <= 0 || ci->low <= 0) return {-INFINITY, INFINITY};
  return {center - std::hypot(std::log(c.median / ci->low), std::log(bi->high / b.median)),
          center + std::hypot(std::log(ci->high / c.median), std::log(b.median / bi->low))};
}

}  // namespace

TimingComparison test_timing(const std::string& experiment, const std::string& metric, const outcome::Stats& base,
                             const outcome::Stats& candidate) {
  TimingComparison t;
  t.experiment = experiment;
  t.metric = metric;
  t.base_median = base.median;
  t.candidate_median = candidate.median;
  t.base_samples = base.samples.size();
  t.candidate_samples = candidate.samples.size();
  t.change = t.candidate_median / t.base_median - 1;
  const auto log_interval = log_ratio_interval(base, candidate);
  t.interval = {std::expm1(log_interval.low), std::expm1(log_interval.high)};
  t.p = util::mann_whitney_p(base.samples, candidate.samples);
  t.run_to_run = std::max(base.run_to_run, candidate.run_to_run);
  return t;
}

double noise_floor(double run_to_run, std::size_t tests, double alpha) {
  if (run_to_run <= 0) return 0;
  const double z = util::normal_quantile(1 - alpha / (2 * static_cast<double>(std::max<std::size_t>(1, tests))));
  return std::expm1(z * std::sqrt(2.0) * run_to_run);
}

void decide(std::vector<TimingComparison>& tests, const std::map<std::string, double>& thresholds, double alpha) {
  // Holm over every test at once; then each threshold, raised where calibration says the point's
  // run-to-run noise alone moves it further (noise_floor).
  std::vector<double> p;
  for (const auto& t : tests) p.push_back(t.p);
  const auto adjusted = util::holm_adjust(p);
  for (std::size_t i = 0; i < tests.size(); ++i) {
    auto& t = tests[i];
    t.p_adjusted = adjusted[i];
    t.threshold = std::max(thresholds.count(t.metric) ? thresholds.at(t.metric) : 0.0, noise_floor(t.run_to_run, tests.size(), alpha));
    if (t.p_adjusted < alpha && std::fabs(t.change) > t.threshold) t.verdict = t.change > 0 ? Change::slower : Change::faster;
    else if (t.interval.low >= -t.threshold && t.interval.high <= t.threshold) t.verdict = Change::same;
    else t.verdict = Change::inconclusive;
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
      out.timings.push_back(test_timing(c.identity, metric, bt->second, ct->second));
    }
    compare_structure(*b, c, out.structure, out.notes);
  }

  decide(out.timings, out.thresholds, out.alpha);
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

report::Table timing_table(const Comparison& c) {
  report::Table t{{"experiment", "metric", "baseline", "candidate", "change", fmt::format("{} interval", util::format_percent(analysis::timing_confidence)),
                   "p (Holm)", "threshold", "verdict"},
                  {}};
  for (const auto& x : c.timings)
    t.rows.push_back({x.experiment, x.metric, util::format_duration(x.base_median), util::format_duration(x.candidate_median), signed_percent(x.change),
                      signed_percent(x.interval.low) + " .. " + signed_percent(x.interval.high), p_text(x.p_adjusted),
                      util::format_percent(x.threshold) + (x.run_to_run > 0 ? " (calibrated)" : ""), std::string(to_string(x.verdict))});
  return t;
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
                     "(family-wise alpha {}); a change counts when significant and beyond its threshold ({}; raised where calibrated). "
                     "Structural changes {} the gate.",
                     c.timings.size(), c.timings.size() == 1 ? "" : "s", util::format_percent(c.alpha), thresholds,
                     c.structure_gated ? "fail" : "do not fail");
}

std::string verdict_line(const Comparison& c) {
  const auto summary = fmt::format("{} slower, {} faster, {} same, {} inconclusive; {} structural regression{}, {} improvement{}{}{}",
                                   c.count(Change::slower), c.count(Change::faster), c.count(Change::same), c.count(Change::inconclusive),
                                   c.structural_regressions(), c.structural_regressions() == 1 ? "" : "s",
                                   c.structure.size() - c.structural_regressions(), c.structure.size() - c.structural_regressions() == 1 ? "" : "s",
                                   c.failed.empty() ? "" : fmt::format("; {} failed", c.failed.size()),
                                   c.missing.empty() ? "" : fmt::format("; {} missing from the candidate", c.missing.size()));
  return fmt::format("{}: {}", c.regression() ? "REGRESSION, the gate fails" : "no regression, the gate passes", summary);
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

std::string terminal_text(const Comparison& c, bool color) {
  const auto paint = [color](const std::string& s, const char* code) { return color ? fmt::format("\033[{}m{}\033[0m", code, s) : s; };
  std::string out = fmt::format("\nexpr compare — series {}\n  baseline   {}\n  candidate  {}\n\n{}\n", c.series, label(c.base), label(c.candidate),
                                method(c));
  if (!c.timings.empty()) out += "\n" + timing_table(c).text("  ");
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

}  // namespace expr::history
