// A/A comparisons of repeated runs, and each point's run-to-run noise.
#include "history/calibration.hpp"

#include <fmt/format.h>

#include <cmath>

#include "report/table.hpp"
#include "util/units.hpp"

namespace expr::history {

std::map<std::string, std::pair<std::size_t, std::size_t>> Calibration::false_alarm_rate() const {
  std::map<std::string, std::pair<std::size_t, std::size_t>> out;
  for (const auto& n : noise) {
    out[n.metric].first += n.false_alarms;
    out[n.metric].second += n.pairs;
  }
  return out;
}

Calibration calibrate(const std::vector<RunRecord>& runs, const CompareOptions& options) {
  if (runs.size() < 2) throw std::invalid_argument("calibration needs at least two runs");
  Calibration c;
  c.series = runs.front().series;
  c.machine = machine_fingerprint(runs.front().environment);
  c.created = report::utc_now();
  c.runs = runs.size();
  c.alpha = options.alpha;

  std::map<std::pair<std::string, std::string>, PointNoise> points;
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (std::size_t j = i + 1; j < runs.size(); ++j) {
      // Each pair learns the noise from the other runs, as a comparison learns it from the
      // history: never from the two runs it judges beyond their own rounds.
      PointRuns others;
      for (std::size_t k = 0; k < runs.size(); ++k)
        if (k != i && k != j)
          for (const auto& e : runs[k].experiments)
            if (e.status == outcome::Status::ok)
              for (const auto& [metric, stats] : e.timings) others[{e.identity, metric}].push_back(stats);
      auto learnt = options;
      learn_history(others, learnt);
      const auto comparison = compare(runs[i], runs[j], learnt);
      c.thresholds = comparison.thresholds;
      ++c.pairs;
      if (comparison.regression()) ++c.failing_pairs;
      c.structural_alarms += comparison.structure.size();
      for (const auto& t : comparison.timings) {
        auto& p = points[{t.experiment, t.metric}];
        ++p.pairs;
        if (t.verdict == Change::slower || t.verdict == Change::faster) ++p.false_alarms;
        if (t.verdict == Change::inconclusive) ++p.inconclusive;
      }
    }

  // Each point's noise: how far its figure (the geometric mean of a run's round medians) scatters
  // over the runs, which is what a comparison's noise floor needs and a run's rounds cannot show.
  std::map<std::pair<std::string, std::string>, std::vector<double>> figures;
  for (const auto& run : runs)
    for (const auto& e : run.experiments)
      if (e.status == outcome::Status::ok)
        for (const auto& [metric, stats] : e.timings)
          if (stats.median > 0) figures[{e.identity, metric}].push_back(std::exp(analysis::log_figure(stats)));
  const std::size_t tests = figures.size();
  for (const auto& [key, f] : figures) {
    auto& p = points[key];
    p.experiment = key.first;
    p.metric = key.second;
    p.runs = f.size();
    const auto noise = analysis::log_spread(f);
    p.run_to_run = noise.sigma;
    p.df = noise.df;
    const double threshold = c.thresholds.count(p.metric) ? c.thresholds.at(p.metric) : 0.0;
    p.detectable = std::max(threshold, noise_floor(noise, tests, c.alpha));
  }
  for (auto& [key, p] : points)
    if (p.runs >= 2) c.noise.push_back(p);
  return c;
}

namespace {

std::string rate(std::size_t k, std::size_t n) {
  return fmt::format("{} of {} ({})", k, n, n ? util::format_percent(static_cast<double>(k) / static_cast<double>(n)) : "—");
}

report::Table point_table(const Calibration& c) {
  report::Table t{{"experiment", "metric", "runs", "run-to-run noise", "df", "false alarms", "inconclusive", "smallest change reported"}, {}};
  for (const auto& n : c.noise)
    t.rows.push_back({n.experiment, n.metric, fmt::format("{}", n.runs), util::format_percent(n.run_to_run), util::format_number(n.df),
                      rate(n.false_alarms, n.pairs), rate(n.inconclusive, n.pairs),
                      std::isfinite(n.detectable) ? util::format_percent(n.detectable) : "none"});
  return t;
}

std::string header(const Calibration& c) {
  std::string thresholds;
  for (const auto& [metric, t] : c.thresholds) thresholds += fmt::format("{}{} {}", thresholds.empty() ? "" : ", ", metric, util::format_percent(t));
  return fmt::format("{} runs of an unchanged build of series {} on {}, every pair compared as `expr compare` compares ({} pairs: "
                     "Mann-Whitney U, Holm, alpha {}, thresholds {}).",
                     c.runs, c.series, c.machine.empty() ? "this machine" : c.machine, c.pairs, util::format_percent(c.alpha), thresholds);
}

}  // namespace

std::string terminal_text(const Calibration& c) {
  std::string out = fmt::format("\nexpr calibrate — {}\n\nfalse alarms (a comparison of two unchanged runs called slower or faster):\n", header(c));
  for (const auto& [metric, n] : c.false_alarm_rate()) out += fmt::format("  {}: {}\n", metric, rate(n.first, n.second));
  out += fmt::format("pairs whose gate would have failed: {}; structural changes between unchanged runs: {}\n\n", rate(c.failing_pairs, c.pairs),
                     c.structural_alarms);
  return out + point_table(c).text("  ");
}

std::string markdown(const Calibration& c) {
  std::string out = fmt::format("# Calibration of {}\n\n{}\n\n## False alarms\n\n", c.series, header(c));
  report::Table rates{{"metric", "false alarms (pairs × points)"}, {}};
  for (const auto& [metric, n] : c.false_alarm_rate()) rates.rows.push_back({metric, rate(n.first, n.second)});
  out += rates.markdown();
  out += fmt::format("\nPairs whose gate would have failed: {}. Structural changes between unchanged runs: {}.\n\n## Per point\n\n",
                     rate(c.failing_pairs, c.pairs), c.structural_alarms);
  return out + point_table(c).markdown();
}

}  // namespace expr::history
