// The reports people read: the side-by-side table, the terminal and Markdown reports, JUnit XML.
#include "report/summary.hpp"

#include <fmt/format.h>

#include <cmath>

#include "analysis/metrics.hpp"
#include "analysis/queries.hpp"
#include "util/units.hpp"

namespace expr::report {

namespace {

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

}  // namespace

Table comparison_table(const RunResult& run) {
  Table t{{"experiment", "device", "status", "device time", "host time", "first call", "kernels", "copies", "memsets", "main kernel",
           "occupancy", "launch API", "TFLOP/s", "rel. error", "guesses"},
          {}};
  for (const auto& e : run.experiments) {
    const auto& m = e.measurement;
    const bool ran = m.status == outcome::Status::ok;
    t.rows.push_back({m.experiment, ran ? (m.device == Device::cuda ? "cuda" : "cpu") : "—", std::string(outcome::to_string(m.status)),
                      cell(m, {"gpu_time", {}, ""}), cell(m, {"host_time", {}, ""}), cell(m, {"first_call", {}, ""}),
                      cell(m, {"kernels", {}, ""}), cell(m, {"copies", {}, ""}), cell(m, {"memsets", {}, ""}),
                      clip(analysis::short_kernel_name(cell(m, {"kernel", {}, "name"})), 40), cell(m, {"kernel", {}, "occupancy"}),
                      cell(m, {"kernel", {}, "launch_api"}), cell(m, {"tflops", {}, ""}), cell(m, {"rel_error", {}, ""}),
                      guesses_cell(e)});
  }
  return t;
}

std::string terminal_report(const RunResult& run, bool color) {
  const auto paint = [color](const std::string& mark) -> std::string {
    if (!color) return mark;
    if (mark == "✓") return "\033[32m✓\033[0m";
    if (mark == "✗") return "\033[31m✗\033[0m";
    return "\033[33m" + mark + "\033[0m";
  };
  std::string out = fmt::format("\n{} — {} experiments — {}\n\n", run.series, run.experiments.size(), run.run_dir.string());
  out += comparison_table(run).text("  ");
  for (const auto& e : run.experiments) {
    const auto& m = e.measurement;
    out += fmt::format("\n{} ({}, {}): {}{}\n", m.experiment, m.plugin, m.device == Device::cuda ? "cuda" : "cpu",
                       outcome::to_string(m.status), m.reason.empty() ? "" : " — " + m.reason);
    for (const auto& x : e.guesses)
      out += fmt::format("  {} {}  →  {}\n", paint(verdict_mark(x)), x.spec.check, observed_cell(x));
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
  for (const auto& e : run.experiments)
    for (const auto& x : e.guesses) {
      if (!x.judgement || x.judgement->verdict != expect::Verdict::contradicted) continue;
      const auto& j = *x.judgement;
      out += fmt::format("  {} {}: {}{}  [{}]\n", paint("✗"), e.measurement.experiment, x.spec.check, x.spec.required ? " (required)" : "", where(x));
      out += fmt::format("      observed {}, guessed {}\n", j.observed, j.guessed);
      if (!j.evidence.empty()) out += fmt::format("      evidence: {}\n", j.evidence);
      for (const auto& c : j.caveats) out += fmt::format("      caveat: {}\n", c);
      if (!x.spec.why.empty()) out += fmt::format("      the guess: {}\n", x.spec.why);
    }
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
std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}
}  // namespace

std::string junit_report(const RunResult& run, const std::vector<JunitFailure>& more) {
  std::string body;
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto& e : run.experiments) {
    const auto& m = e.measurement;
    const auto suite = xml(run.series + "." + m.experiment);
    body += fmt::format("  <testsuite name=\"{}\">\n", suite);
    ++tests;
    body += fmt::format("    <testcase classname=\"{}\" name=\"runs\">", suite);
    if (m.status == outcome::Status::skipped) {
      ++skipped;
      body += fmt::format("<skipped message=\"{}\"/>", xml(m.reason));
    } else if (m.status != outcome::Status::ok) {
      ++errors;
      body += fmt::format("<error message=\"{}\">{}</error>", xml(std::string(outcome::to_string(m.status))), xml(m.reason));
    }
    body += "</testcase>\n";
    for (const auto& x : e.guesses) {
      ++tests;
      body += fmt::format("    <testcase classname=\"{}\" name=\"{}\">", suite, xml(x.spec.check));
      if (x.judgement) {
        const auto& j = *x.judgement;
        const auto detail = xml(fmt::format("observed {}, guessed {}; {}", j.observed, j.guessed, j.evidence));
        if (j.verdict == expect::Verdict::contradicted && x.spec.required) {
          ++failures;
          body += fmt::format("<failure message=\"required guess contradicted\">{}</failure>", detail);
        } else if (j.verdict == expect::Verdict::contradicted) {
          body += fmt::format("<system-out>contradicted (a finding; not required): {}</system-out>", detail);
        } else if (j.verdict == expect::Verdict::not_evaluable) {
          if (x.spec.required) {
            ++failures;
            body += fmt::format("<failure message=\"required guess not evaluable\">{}</failure>", xml(j.reason));
          } else {
            ++skipped;
            body += fmt::format("<skipped message=\"{}\"/>", xml(j.reason));
          }
        }
      }
      body += "</testcase>\n";
    }
    body += "  </testsuite>\n";
  }
  for (const auto& f : more) {
    ++tests;
    ++failures;
    body += fmt::format("  <testsuite name=\"{0}\">\n    <testcase classname=\"{0}\" name=\"{1}\"><failure message=\"{2}\">{3}</failure></testcase>\n  </testsuite>\n",
                        xml(f.suite), xml(f.name), xml(f.message), xml(f.detail));
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n{}</testsuites>\n",
                     xml(run.series), tests, failures, errors, skipped, body);
}


}  // namespace expr::report
