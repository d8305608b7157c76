// `expr history`, `expr compare` and `expr across` as the command line prints them.
#include <fmt/format.h>
#include <unistd.h>

#include "cli/commands.hpp"
#include "history/across.hpp"
#include "report/table.hpp"
#include "session/comparison.hpp"
#include "util/units.hpp"

namespace expr::cli {

namespace {

int print_runs(const session::RecordedRuns& recorded) {
  report::Table t{{"run", "series", "started", "revision", "experiments", "guesses ✓ ✗ ?", "failed", "gate", "machine"}, {}};
  for (const auto& r : recorded.runs)
    t.rows.push_back({r.id, r.series, r.started, r.revision, fmt::format("{} of {}", r.recorded, r.planned),
                      fmt::format("{} {} {}", r.tally.confirmed, r.tally.contradicted, r.tally.not_evaluable),
                      fmt::format("{}", r.tally.experiments_failed), r.gate.empty() ? "" : r.gate + " against " + r.baseline,
                      report::clip(r.machine, 60)});
  fmt::print("{}: {} run{} shown\n\n{}\n", recorded.file.string(), t.rows.size(), t.rows.size() == 1 ? "" : "s", t.text("  "));
  return ok;
}

int print_figure(const session::FigureOverTime& f, const session::HistoryArgs& args) {
  report::Table t{{"run", "started", "revision", "median", "spread", "samples", "step"}, {}};
  for (const auto& p : f.points) {
    std::string step;
    for (const auto& s : f.steps)
      if (s.experiment == p.run && (s.verdict == history::Change::slower || s.verdict == history::Change::faster))
        step = fmt::format("{} {:+.2f}% ({})", s.verdict == history::Change::slower ? "▲" : "▼", 100 * s.change, history::to_string(s.verdict));
    t.rows.push_back({p.run, p.started, p.revision, util::format_duration(p.stats.median), util::format_percent(p.stats.spread),
                      fmt::format("{}", p.stats.count), step});
  }
  fmt::print("{} {} over {} run{} of {}; a step is a change from the run before beyond {} (Mann-Whitney U, Holm over {} step{})\n\n{}",
             args.experiment, args.metric, f.points.size(), f.points.size() == 1 ? "" : "s", f.series, util::format_percent(f.threshold),
             f.steps.size(), f.steps.size() == 1 ? "" : "s", t.text("  ") + "\n");
  return ok;
}

}  // namespace

int history(const session::HistoryArgs& args) {
  if (args.experiment.empty()) return print_runs(session::recorded_runs(args));
  return print_figure(session::figure_over_time(args), args);
}

int compare(const session::CompareArgs& args) {
  const auto compared = session::compare(args);
  fmt::print("{}", history::terminal_text(compared.comparison, ::isatty(STDOUT_FILENO)));
  if (args.markdown) session::write_view(*args.markdown, history::markdown(compared.comparison));
  if (args.html) session::write_view(*args.html, history::html(compared.comparison));
  return exit_code(compared.status);
}

int across(const session::AcrossArgs& args) {
  const auto view = session::across(args);
  fmt::print("{}", history::terminal_text(view, ::isatty(STDOUT_FILENO)));
  if (args.json) session::write_view(*args.json, history::to_json(view).dump(2) + "\n");
  if (args.html) session::write_view(*args.html, history::html(view));
  return ok;
}

}  // namespace expr::cli
