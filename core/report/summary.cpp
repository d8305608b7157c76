// The reports people read: the side-by-side table, the terminal and Markdown reports, JUnit XML.
#include "report/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/metrics.hpp"
#include "analysis/queries.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace expr::report {

namespace {

// The terminal report's lines stay within this many characters; a wider table is printed in blocks
// of columns.
constexpr std::size_t terminal_width = 120;

// A figure for a table cell, or "—" when the experiment cannot give it.
std::string cell(const outcome::Measurement& m, analysis::MetricCall call) {
  const auto o = analysis::evaluate(m, call);
  if (const auto* obs = std::get_if<analysis::Observation>(&o)) {
    if (obs->absent) return "—";
    if (const auto* s = std::get_if<std::string>(&obs->value)) return *s;
    // Plain numbers that are not whole (throughput, errors) get three digits: a cell is narrow.
    if (const auto* q = std::get_if<analysis::Quantity>(&obs->value); q && q->display == analysis::Display::number && q->value != std::floor(q->value))
      return fmt::format("{:.3g}", q->value);
    return analysis::format(obs->value);
  }
  return "—";
}

std::string verdict_mark(const JudgedGuess& x) {
  if (!x.judgement) return "…";
  switch (x.judgement->verdict) {
    case expect::Verdict::confirmed: return "✓";
    case expect::Verdict::contradicted: return "✗";
    case expect::Verdict::not_evaluable: return "?";
  }
  return "?";
}

std::string guesses_cell(const ExperimentResult& e) {
  std::size_t ok = 0, bad = 0, unknown = 0;
  for (const auto& x : e.guesses) {
    if (!x.judgement) continue;
    if (x.judgement->verdict == expect::Verdict::confirmed) ++ok;
    else if (x.judgement->verdict == expect::Verdict::contradicted) ++bad;
    else ++unknown;
  }
  return fmt::format("{}✓ {}✗ {}?", ok, bad, unknown);
}

std::string where(const JudgedGuess& x) {
  if (x.spec.origin == series::GuessOrigin::plugin) return "plugin guess";
  return x.spec.pos().line > 0 ? x.spec.pos().str() : "series";
}

// "sdpa" or, for one group of a sweep's other axes, "sdpa[dtype=bf16]".
std::string sweep_name(const JudgedSweepGuess& s) { return s.group.empty() ? s.family : s.family + "[" + s.group + "]"; }

std::string observed_cell(const JudgedGuess& x) {
  if (!x.judgement) return "pending";
  if (x.judgement->verdict == expect::Verdict::not_evaluable) return "not evaluable: " + x.judgement->reason;
  return x.judgement->observed;
}

// The observed value, and the guessed one where the check does not spell it out (a value computed
// from another experiment or a formula): "1.06 ms vs < 2.614 ms (sdpa_math.gpu_time)".
std::string observed_and_guessed(const JudgedGuess& x) {
  const auto observed = observed_cell(x);
  if (!x.judgement || x.judgement->verdict == expect::Verdict::not_evaluable) return observed;
  const auto& guessed = x.judgement->guessed;
  const auto value = guessed.substr(std::min(guessed.size(), guessed.find(' ') + 1));  // "< 2.614 ms (…)" without "< "
  if (value.empty() || x.spec.check.find(value) != std::string::npos) return observed;
  return observed + " vs " + guessed;
}

}  // namespace

Table comparison_table(const RunResult& run) {
  std::vector<const ExperimentResult*> all;
  for (const auto& e : run.experiments) all.push_back(&e);
  return comparison_table(all);
}

Table comparison_table(const std::vector<const ExperimentResult*>& experiments) {
  // The figures' columns are named as guesses name them (`expr metrics`), so that a column read in
  // the table can be written in a guess as it stands.
  Table t{{"experiment", "device", "status", "guesses", "gpu_time", "host_time", "first_call", "tflops", "rel_error", "kernels", "copies",
           "memsets", "peak_memory", "kernel", "kernel.occupancy", "kernel.achieved_occupancy", "kernel.launch_api"},
          {}};
  for (const auto* e : experiments) {
    const auto& m = e->measurement;
    const bool ran = m.status == outcome::Status::ok;
    t.rows.push_back({m.experiment, ran ? (m.device == Device::cuda ? "cuda" : "cpu") : "—", std::string(outcome::to_string(m.status)),
                      guesses_cell(*e), cell(m, {"gpu_time", {}, ""}), cell(m, {"host_time", {}, ""}), cell(m, {"first_call", {}, ""}),
                      cell(m, {"tflops", {}, ""}), cell(m, {"rel_error", {}, ""}), cell(m, {"kernels", {}, ""}), cell(m, {"copies", {}, ""}),
                      cell(m, {"memsets", {}, ""}), cell(m, {"peak_memory", {}, ""}), clip(analysis::short_kernel_name(cell(m, {"kernel", {}, "name"})), 40),
                      cell(m, {"kernel", {}, "occupancy"}), cell(m, {"kernel", {}, "achieved_occupancy"}), cell(m, {"kernel", {}, "launch_api"})});
  }
  // A column that no experiment can fill (the device's figures in a CPU run, counters when off).
  for (std::size_t c = t.header.size(); c-- > 1 && !t.rows.empty();)
    if (std::all_of(t.rows.begin(), t.rows.end(), [c](const auto& row) { return row[c] == "—"; })) {
      t.header.erase(t.header.begin() + static_cast<std::ptrdiff_t>(c));
      for (auto& row : t.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    }
  return t;
}

std::string needing_a_look_line(std::size_t listed, std::size_t needing_a_look) {
  return fmt::format("{} experiment{} need{} a look (failed, a guess not confirmed, a timing warning){}", needing_a_look, needing_a_look == 1 ? "" : "s",
                     needing_a_look == 1 ? "s" : "", listed < needing_a_look ? fmt::format(", the first {} listed", listed) : "");
}

Listing listing(const RunResult& run, std::size_t at_most) {
  Listing l;
  l.brief = run.experiments.size() > at_most;
  for (const auto& e : run.experiments) {
    const bool needs_a_look = e.measurement.status != outcome::Status::ok || !e.measurement.timing_warning.empty() ||
                              std::any_of(e.guesses.begin(), e.guesses.end(),
                                          [](const auto& x) { return !x.judgement || x.judgement->verdict != expect::Verdict::confirmed; });
    l.needing_a_look += needs_a_look;
    if ((!l.brief || needs_a_look) && l.listed.size() < at_most) l.listed.push_back(&e);
  }
  return l;
}

std::string terminal_report(const RunResult& run, bool color, std::size_t at_most) {
  const auto paint = [color](const std::string& mark) -> std::string {
    if (!color) return mark;
    if (mark == "✓") return "\033[32m✓\033[0m";
    if (mark == "✗") return "\033[31m✗\033[0m";
    return "\033[33m" + mark + "\033[0m";
  };
  const auto [brief, listed, needing_a_look] = listing(run, at_most);
  std::string out = fmt::format("\n{} — {} experiments — {}\n\n", run.series, run.experiments.size(), run.run_dir.string());
  if (brief)
    out += fmt::format("  {}; the other {} ran with every guess confirmed (`expr show --all` lists every one)\n\n", needing_a_look_line(listed.size(), needing_a_look),
                       run.experiments.size() - needing_a_look);
  if (!listed.empty()) out += comparison_table(listed).text("  ", terminal_width, 1);
  for (const auto* e : listed) {
    const auto& m = e->measurement;
    out += fmt::format("\n{} ({}, {}): {}{}\n", m.experiment, m.plugin, m.device == Device::cuda ? "cuda" : "cpu",
                       outcome::to_string(m.status), m.reason.empty() ? "" : " — " + m.reason);
    for (const auto& x : e->guesses)
      out += fmt::format("  {} {}  →  {}\n", paint(verdict_mark(x)), x.spec.check, observed_and_guessed(x));
  }
  if (!run.sweep_guesses.empty()) out += "\nsweeps:\n";
  for (const auto& s : run.sweep_guesses)
    out += fmt::format("  {} {}: {}  →  {}\n", paint(verdict_mark(s.guess)), sweep_name(s), s.guess.spec.check, observed_cell(s.guess));
  const auto t = tally(run);
  out += fmt::format("\nGuess vs trace: {} confirmed, {} contradicted, {} not evaluable\n", t.confirmed, t.contradicted, t.not_evaluable);
  for (const auto& s : run.sweep_guesses) {
    if (!s.guess.judgement || s.guess.judgement->verdict != expect::Verdict::contradicted) continue;
    out += fmt::format("  {} {}: {}{}  [{}]\n", paint("✗"), sweep_name(s), s.guess.spec.check, s.guess.spec.required ? " (required)" : "",
                       where(s.guess));
    out += fmt::format("      observed {}, guessed {}\n      evidence: {}\n", s.guess.judgement->observed, s.guess.judgement->guessed,
                       s.guess.judgement->evidence);
  }
  for (const auto* e : listed)
    for (const auto& x : e->guesses) {
      if (!x.judgement || x.judgement->verdict != expect::Verdict::contradicted) continue;
      const auto& j = *x.judgement;
      out += fmt::format("  {} {}: {}{}  [{}]\n", paint("✗"), e->measurement.experiment, x.spec.check, x.spec.required ? " (required)" : "", where(x));
      out += fmt::format("      observed {}, guessed {}\n", j.observed, j.guessed);
      if (!j.evidence.empty()) out += fmt::format("      evidence: {}\n", j.evidence);
      for (const auto& c : j.caveats) out += fmt::format("      caveat: {}\n", c);
      if (!x.spec.why.empty()) out += fmt::format("      the guess: {}\n", x.spec.why);
    }
  if (brief && listed.size() < needing_a_look)
    out += fmt::format("  (the guesses of {} more experiments that need a look are not listed: `expr show --all`)\n",
                       needing_a_look - listed.size());
  return out;
}

std::string markdown_report(const RunResult& run) {
  std::string out = fmt::format("# {}\n\n", run.series);
  if (!run.description.empty()) out += run.description + "\n\n";
  out += fmt::format("Run from `{}`, started {}, finished {}.\n\n", run.series_file, run.started, run.finished.empty() ? "(running)" : run.finished);
  out += "## Environment\n\n";
  Table env{{"key", "value"}, {}};
  for (const auto& [k, v] : run.environment) env.rows.push_back({k, v});
  out += env.markdown() + "\n## Experiments side by side\n\n" + comparison_table(run).markdown();
  const auto t = tally(run);
  out += fmt::format("\n## Guess vs trace\n\n{} confirmed, {} contradicted, {} not evaluable.\n", t.confirmed, t.contradicted,
                     t.not_evaluable);
  for (const auto& e : run.experiments) {
    const auto& m = e.measurement;
    out += fmt::format("\n### {}\n\n`{}` on {}: **{}**{}\n\n", m.experiment, m.plugin, m.device == Device::cuda ? "cuda" : "cpu",
                       outcome::to_string(m.status), m.reason.empty() ? "" : " — " + m.reason);
    if (e.guesses.empty()) continue;
    Table g{{"", "guess", "observed", "evidence", "from"}, {}};
    for (const auto& x : e.guesses)
      g.rows.push_back({verdict_mark(x), "`" + x.spec.check + "`" + (x.spec.required ? " (required)" : ""), observed_cell(x),
                        x.judgement ? x.judgement->evidence : "", where(x)});
    out += g.markdown();
  }
  if (run.sweep_guesses.empty()) return out;
  out += "\n## Guesses about whole sweeps\n\n";
  Table sweeps{{"", "sweep", "guess", "observed", "evidence", "from"}, {}};
  for (const auto& s : run.sweep_guesses)
    sweeps.rows.push_back({verdict_mark(s.guess), sweep_name(s), "`" + s.guess.spec.check + "`" + (s.guess.spec.required ? " (required)" : ""),
                           observed_cell(s.guess), s.guess.judgement ? s.guess.judgement->evidence : "", where(s.guess)});
  return out + sweeps.markdown();
}

namespace {

// Text as XML 1.0 allows it in attributes and content: escaped, UTF-8, and without the control
// characters XML cannot hold (each becomes U+FFFD, like a byte that is not UTF-8).
std::string xml(std::string_view text) {
  std::string out;
  for (const char c : util::valid_utf8(text)) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += "&#10;"; break;
      case '\t': out += "&#9;"; break;
      case '\r': out += "&#13;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += "\uFFFD";
        else out += c;
    }
  }
  return out;
}

// One JUnit test suite being written, with its counts.
struct Suite {
  std::string name;
  std::optional<double> seconds;
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string cases;

  // A test case, with at most one outcome element (failure, error or skipped) and its output.
  void add(std::string_view test, std::optional<double> time, std::string_view outcome, std::string_view output) {
    ++tests;
    cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\"{}>{}", xml(name), xml(test),
                         time ? fmt::format(" time=\"{:.3f}\"", *time) : "", outcome);
    if (!output.empty()) cases += fmt::format("<system-out>{}</system-out>", xml(output));
    cases += "</testcase>\n";
  }
  void fail(std::string_view test, std::string_view message, std::string_view detail) {
    ++failures;
    add(test, std::nullopt, fmt::format("<failure message=\"{}\">{}</failure>", xml(message), xml(detail)), "");
  }
  void skip(std::string_view test, std::string_view message) {
    ++skipped;
    add(test, std::nullopt, fmt::format("<skipped message=\"{}\"/>", xml(message)), "");
  }

  // A guess: a required one that is not confirmed fails; a contradicted one that is not required
  // is a finding, shown as output of a passing case; one not judged (yet) is skipped.
  void guess(std::string_view test, const JudgedGuess& g) {
    if (!g.judgement) return skip(test, "not judged yet: an experiment it reads has not finished");
    const auto& j = *g.judgement;
    const auto detail = fmt::format("observed {}, guessed {}; {}", j.observed, j.guessed, j.evidence);
    switch (j.verdict) {
      case expect::Verdict::confirmed: return add(test, std::nullopt, "", "");
      case expect::Verdict::contradicted:
        if (g.spec.required) return fail(test, "required guess contradicted", detail);
        return add(test, std::nullopt, "", "contradicted (a finding; not required): " + detail);
      case expect::Verdict::not_evaluable:
        if (g.spec.required) return fail(test, "required guess not evaluable", j.reason);
        return skip(test, "not evaluable: " + j.reason);
    }
  }

  std::string text() const {
    return fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"{}>\n{}  </testsuite>\n",
                       xml(name), tests, failures, errors, skipped, seconds ? fmt::format(" time=\"{:.3f}\"", *seconds) : "", cases);
  }
};

}  // namespace

std::string junit_report(const RunResult& run, const std::vector<JunitFailure>& more) {
  std::vector<Suite> suites;
  for (const auto& e : run.experiments) {
    const auto& m = e.measurement;
    auto& suite = suites.emplace_back();
    suite.name = run.series + "." + m.experiment;
    suite.seconds = m.wall_seconds;
    // The experiment itself: an error when it failed to run, skipped when it did not run.
    if (m.status == outcome::Status::skipped) {
      suite.skip("runs", m.reason);
    } else if (m.status != outcome::Status::ok) {
      ++suite.errors;
      suite.add("runs", m.wall_seconds,
                fmt::format("<error message=\"{}\">{}</error>", xml(outcome::to_string(m.status)), xml(m.reason)), "");
    } else {
      suite.add("runs", m.wall_seconds, "", m.reason);
    }
    for (const auto& g : e.guesses) suite.guess(g.spec.check, g);
  }
  if (!run.sweep_guesses.empty()) {
    auto& suite = suites.emplace_back();
    suite.name = run.series + ".sweeps";
    for (const auto& s : run.sweep_guesses) suite.guess(sweep_name(s) + ": " + s.guess.spec.check, s.guess);
  }
  for (const auto& f : more) {
    auto it = std::find_if(suites.begin(), suites.end(), [&](const Suite& s) { return s.name == f.suite; });
    if (it == suites.end()) {
      suites.emplace_back().name = f.suite;
      it = std::prev(suites.end());
    }
    it->fail(f.name, f.message, f.detail);
  }
  std::size_t tests = 0, failures = 0, errors = 0;
  double seconds = 0;
  std::string body;
  for (const auto& s : suites) {
    tests += s.tests, failures += s.failures, errors += s.errors;
    seconds += s.seconds.value_or(0);
    body += s.text();
  }
  // junit-10.xsd allows no "skipped" on testsuites; each testsuite carries its own.
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n{}</testsuites>\n",
                     xml(run.series), tests, failures, errors, seconds, body);
}

}  // namespace expr::report
