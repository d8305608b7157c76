// The gate's verdict, as JUnit failures and in the run's files (summary.md, junit.xml, gate.txt, report.html) and history.
#include "session/gate.hpp"

#include <fmt/format.h>

#include "report/html_report.hpp"
#include "report/run_directory.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"
#include "util/units.hpp"

namespace expr::session {

std::vector<report::JunitFailure> gate_failures(const history::Comparison& comparison, const std::string& series) {
  std::vector<report::JunitFailure> failures;
  const auto suite = series + ".gate";
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
  return failures;
}

std::string gate_text(const history::Comparison& comparison, const std::vector<report::JunitFailure>& failures) {
  auto out = fmt::format("gated against {}{}\n  {}\n", comparison.base.id,
                         comparison.base.run_dir.empty() ? "" : " (" + comparison.base.run_dir + ")", history::verdict_line(comparison));
  for (const auto& f : failures) out += fmt::format("  {}: {}: {}\n", f.message, f.name, f.detail);
  for (const auto& n : comparison.notes) out += "  note: " + n + "\n";
  return out;
}

std::string record_gate(const report::RunResult& run, const history::Comparison& comparison, history::Store* store, const std::string& base_id) {
  const report::RunDirectory dir(run.run_dir);
  try {
    util::write_atomically(dir.summary(), report::markdown_report(run) + "\n" + history::markdown(comparison));
    const auto failures = gate_failures(comparison, run.series);
    util::write_atomically(dir.junit(), report::junit_report(run, failures));
    util::write_atomically(dir.gate(), gate_text(comparison, failures));
    util::write_atomically(dir.html_report(),
                           report::html_report(run, report::sweep_plots(run), {{"gate", "Against the baseline", history::html_section(comparison)}}));
    if (store) store->set_gate(run.id, base_id, !comparison.regression());
    return "";
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return e.what();
  }
}

}  // namespace expr::session
