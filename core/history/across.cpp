// Runs of one series side by side: the view, and its text, JSON and HTML.
#include "history/across.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "history/compare.hpp"
#include "report/html_report.hpp"
#include "report/plot.hpp"
#include "report/table.hpp"
#include "util/units.hpp"

namespace expr::history {

std::string_view to_string(EnvironmentKind kind) {
  switch (kind) {
    case EnvironmentKind::hardware: return "hardware";
    case EnvironmentKind::software: return "software";
    case EnvironmentKind::instance: return "instance";
  }
  return "software";
}

EnvironmentKind kind_of(const std::string& key) {
  static const std::set<std::string> hardware{"gpu", "cpu", "cpu_cores", "gpu_compute_capability", "gpu_memory_gib", "gpu_multiprocessors"};
  static const std::set<std::string> instance{"host", "gpu_uuid", "gpu_index"};
  if (hardware.count(key)) return EnvironmentKind::hardware;
  if (instance.count(key)) return EnvironmentKind::instance;
  return EnvironmentKind::software;
}

std::string machine_name(const std::map<std::string, std::string>& environment) {
  const auto value = [&](const char* key) {
    const auto it = environment.find(key);
    return it == environment.end() ? std::string() : it->second;
  };
  std::vector<std::string> parts;
  parts.push_back(!value("gpu").empty() ? value("gpu") : !value("cpu").empty() ? value("cpu") : "unknown machine");
  for (const auto& [key, name] : std::vector<std::pair<const char*, const char*>>{
           {"driver", "driver"}, {"cuda_runtime", "CUDA"}, {"libtorch", "LibTorch"}, {"cudnn", "cuDNN"}})
    if (!value(key).empty()) parts.push_back(fmt::format("{} {}", name, value(key)));
  return fmt::format("{}", fmt::join(parts, " · "));
}

std::size_t Across::differing() const {
  return static_cast<std::size_t>(std::count_if(guesses.begin(), guesses.end(), [](const GuessRow& g) { return g.differs; }));
}

namespace {

std::optional<double> timing(const Figures& f, const std::string& metric) {
  if (metric == "gpu_time") return f.gpu_time;
  if (metric == "host_time") return f.host_time;
  return std::nullopt;
}

Figures figures_of(const ExperimentRecord& e) {
  Figures f;
  f.status = e.status;
  const auto median = [&](const char* metric) -> std::optional<double> {
    const auto it = e.timings.find(metric);
    if (it == e.timings.end() || it->second.count == 0 || !(it->second.median > 0)) return std::nullopt;
    return it->second.median;
  };
  f.gpu_time = median("gpu_time");
  f.host_time = median("host_time");
  if (e.structure.device_traced) {
    const auto number = [&](const char* name) -> std::optional<double> {
      const auto* figure = e.structure.find(name);
      if (!figure || !std::holds_alternative<double>(figure->value)) return std::nullopt;
      return std::get<double>(figure->value);
    };
    f.kernels = number("kernels");
    f.occupancy = number("main kernel occupancy");
    if (const auto* main = e.structure.find("main kernel"); main && std::holds_alternative<std::string>(main->value))
      f.main_kernel = std::get<std::string>(main->value);
  }
  return f;
}

}  // namespace

std::optional<double> Across::ratio(const ExperimentRow& row, std::size_t run, const std::string& metric) const {
  if (!row.cells[run] || !row.cells[reference]) return std::nullopt;
  const auto value = timing(*row.cells[run], metric), base = timing(*row.cells[reference], metric);
  if (!value || !base) return std::nullopt;
  return *value / *base;
}

Across across(const std::vector<RunRecord>& runs, std::size_t reference) {
  if (runs.size() < 2) throw Incomparable(fmt::format("side by side needs two runs or more; {} given", runs.size()));
  if (reference >= runs.size())
    throw Incomparable(fmt::format("the reference is run {}, and there are {} runs", reference + 1, runs.size()));
  std::set<std::string> ids;
  for (const auto& r : runs) {
    if (r.series != runs.front().series)
      throw Incomparable(fmt::format("{} is a run of series '{}', {} of series '{}': side by side shows runs of one series", runs.front().id,
                                     runs.front().series, r.id, r.series));
    if (!ids.insert(r.id).second) throw Incomparable(fmt::format("run {} is given twice", r.id));
  }
  Across a;
  a.series = runs.front().series;
  a.reference = reference;
  const auto n = runs.size();
  for (const auto& r : runs) a.runs.push_back({r.id, r.run_dir, r.started, r.revision, machine_name(r.environment), r.environment});

  std::set<std::string> keys;
  for (const auto& r : runs)
    for (const auto& [key, value] : r.environment) keys.insert(key);
  for (const auto& key : keys) {
    EnvironmentRow row{key, kind_of(key), {}};
    for (const auto& r : runs) {
      const auto it = r.environment.find(key);
      row.values.push_back(it == r.environment.end() ? "" : it->second);
    }
    if (std::adjacent_find(row.values.begin(), row.values.end(), std::not_equal_to<>()) != row.values.end()) a.environment.push_back(std::move(row));
  }
  std::stable_sort(a.environment.begin(), a.environment.end(), [](const auto& x, const auto& y) { return x.kind < y.kind; });

  std::map<std::pair<std::string, std::string>, std::size_t> guess_at;
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& v : runs[i].verdicts) {
      const auto [it, added] = guess_at.try_emplace({v.subject, v.check}, a.guesses.size());
      if (added) a.guesses.push_back({v.subject, v.check, v.required, std::vector<std::optional<VerdictCell>>(n), false});
      a.guesses[it->second].cells[i] = VerdictCell{v.verdict, v.observed, v.reason};
      a.guesses[it->second].required = a.guesses[it->second].required || v.required;
    }
  for (auto& g : a.guesses) {
    const auto& first = g.cells.front();
    g.differs = std::any_of(g.cells.begin(), g.cells.end(), [&](const auto& c) { return !c || !first || c->verdict != first->verdict; });
  }
  std::stable_partition(a.guesses.begin(), a.guesses.end(), [](const GuessRow& g) { return g.differs; });

  std::map<std::string, std::size_t> experiment_at;
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& e : runs[i].experiments) {
      const auto [it, added] = experiment_at.try_emplace(e.identity, a.experiments.size());
      if (added) a.experiments.push_back({e.identity, std::vector<std::optional<Figures>>(n)});
      a.experiments[it->second].cells[i] = figures_of(e);
    }
  return a;
}

namespace {

std::string mark(const std::string& verdict) {
  if (verdict == "confirmed") return "✓";
  if (verdict == "contradicted") return "✗";
  if (verdict == "not evaluable") return "?";
  return "…";
}

// A verdict as a cell: its mark and what was observed, or why it could not be judged.
std::string verdict_text(const std::optional<VerdictCell>& c, std::size_t width) {
  if (!c) return "— (no such guess)";
  const auto& said = c->verdict == "not evaluable" && c->observed.empty() ? c->reason : c->observed;
  return report::clip(mark(c->verdict) + " " + said, width);
}

std::string duration_or_dash(const std::optional<double>& ns) { return ns ? util::format_duration(*ns) : "—"; }

// One value if every run has the same, else each run's, in their order.
std::string per_run(const std::vector<std::string>& values) {
  if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) == values.end()) return values.empty() ? "" : values.front();
  return fmt::format("{}", fmt::join(values, " / "));
}

// The timings that some run has: gpu_time, host_time.
std::vector<std::string> timed_metrics(const Across& a) {
  std::vector<std::string> out;
  for (const std::string metric : {"gpu_time", "host_time"})
    if (std::any_of(a.experiments.begin(), a.experiments.end(), [&](const ExperimentRow& row) {
          return std::any_of(row.cells.begin(), row.cells.end(), [&](const auto& c) { return c && timing(*c, metric); });
        }))
      out.push_back(metric);
  return out;
}

std::string ratio_text(const Across& a, const ExperimentRow& row, std::size_t run, const std::string& metric) {
  if (run == a.reference) return "";
  const auto r = a.ratio(row, run, metric);
  return r ? fmt::format(" ({:.2f}×)", *r) : "";
}

report::Table experiments_table(const Across& a, std::size_t kernel_width) {
  report::Table t{{"experiment"}, {}};
  const auto metrics = timed_metrics(a);
  for (const auto& metric : metrics)
    for (std::size_t i = 0; i < a.runs.size(); ++i) t.header.push_back(fmt::format("{} {}", metric, i + 1));
  for (const char* h : {"status", "kernels", "main kernel", "occupancy"}) t.header.push_back(h);
  for (const auto& row : a.experiments) {
    std::vector<std::string> cells{row.identity};
    for (const auto& metric : metrics)
      for (std::size_t i = 0; i < a.runs.size(); ++i)
        cells.push_back(row.cells[i] ? duration_or_dash(timing(*row.cells[i], metric)) + ratio_text(a, row, i, metric) : "— (not run)");
    std::vector<std::string> status, kernels, main, occupancy;
    for (const auto& c : row.cells) {
      status.push_back(c ? std::string(outcome::to_string(c->status)) : "absent");
      kernels.push_back(c && c->kernels ? fmt::format("{:g}", *c->kernels) : "—");
      main.push_back(c && !c->main_kernel.empty() ? report::clip(c->main_kernel, kernel_width) : "—");
      occupancy.push_back(c && c->occupancy ? util::format_percent(*c->occupancy, 3) : "—");
    }
    for (const auto* values : {&status, &kernels, &main, &occupancy}) cells.push_back(per_run(*values));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

report::Table runs_table(const Across& a) {
  report::Table t{{"run", "machine", "run", "started", "expr"}, {}};
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    const auto& r = a.runs[i];
    t.rows.push_back({fmt::format("{}{}", i + 1, i == a.reference ? " (reference)" : ""), r.machine, r.run_dir.empty() ? r.id : r.run_dir,
                      r.started, r.revision});
  }
  return t;
}

report::Table environment_table(const Across& a, std::size_t width) {
  report::Table t{{"key", "kind"}, {}};
  for (std::size_t i = 0; i < a.runs.size(); ++i) t.header.push_back(fmt::format("run {}", i + 1));
  for (const auto& row : a.environment) {
    std::vector<std::string> cells{row.key, std::string(to_string(row.kind))};
    for (const auto& v : row.values) cells.push_back(v.empty() ? "—" : report::clip(v, width));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

report::Table guesses_table(const Across& a, std::size_t width) {
  report::Table t{{"", "experiment", "guess"}, {}};
  for (std::size_t i = 0; i < a.runs.size(); ++i) t.header.push_back(fmt::format("run {}", i + 1));
  for (const auto& g : a.guesses) {
    std::vector<std::string> cells{g.differs ? "≠" : "=", g.subject, report::clip(g.check, width) + (g.required ? " (required)" : "")};
    for (const auto& c : g.cells) cells.push_back(verdict_text(c, width));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

std::string environment_line(const Across& a) {
  if (a.environment.empty()) return "Their environments are the same.";
  std::map<EnvironmentKind, std::size_t> count;
  for (const auto& row : a.environment) ++count[row.kind];
  std::vector<std::string> parts;
  for (const auto kind : {EnvironmentKind::hardware, EnvironmentKind::software, EnvironmentKind::instance})
    if (count[kind]) parts.push_back(fmt::format("{} of {}", count[kind], to_string(kind)));
  return fmt::format("What differs in their environments ({} key{}: {}):", a.environment.size(), a.environment.size() == 1 ? "" : "s",
                     fmt::join(parts, ", "));
}

std::string guesses_line(const Across& a) {
  return fmt::format("Guesses: {} of {} differ between the runs{}", a.differing(), a.guesses.size(),
                     a.differing() ? " (listed first, marked ≠; a guess one run does not have differs too)" : "");
}

}  // namespace

std::string terminal_text(const Across& a, bool color) {
  const auto bold = [color](const std::string& s) { return color ? fmt::format("\033[1m{}\033[0m", s) : s; };
  std::string out = bold(fmt::format("{}: {} runs side by side, ratios to run {}", a.series, a.runs.size(), a.reference + 1)) + "\n\n";
  out += runs_table(a).text("  ") + "\n";
  out += bold(environment_line(a)) + "\n";
  if (!a.environment.empty()) out += "\n" + environment_table(a, 40).text("  ") + "\n";
  out += bold(guesses_line(a)) + "\n";
  if (!a.guesses.empty()) out += "\n" + guesses_table(a, 32).text("  ", 200, 3) + "\n";
  out += bold(fmt::format("Experiments: {}, each timing a median, its ratio to run {} in brackets", a.experiments.size(), a.reference + 1)) + "\n\n";
  out += experiments_table(a, 40).text("  ", 200, 1);
  return out;
}

nlohmann::json to_json(const Across& a) {
  const auto optional_number = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j{{"schema", "expr.across/1"}, {"series", a.series}, {"reference", a.reference}};
  j["runs"] = nlohmann::json::array();
  for (const auto& r : a.runs)
    j["runs"].push_back({{"id", r.id}, {"run_dir", r.run_dir}, {"started", r.started}, {"revision", r.revision}, {"machine", r.machine},
                         {"fingerprint", machine_fingerprint(r.environment)}, {"environment", r.environment}});
  j["environment"] = nlohmann::json::array();
  for (const auto& row : a.environment) j["environment"].push_back({{"key", row.key}, {"kind", to_string(row.kind)}, {"values", row.values}});
  j["guesses"] = nlohmann::json::array();
  for (const auto& g : a.guesses) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& c : g.cells)
      cells.push_back(c ? nlohmann::json{{"verdict", c->verdict}, {"observed", c->observed}, {"reason", c->reason}} : nlohmann::json(nullptr));
    j["guesses"].push_back({{"subject", g.subject}, {"check", g.check}, {"required", g.required}, {"differs", g.differs}, {"runs", cells}});
  }
  j["experiments"] = nlohmann::json::array();
  for (const auto& row : a.experiments) {
    nlohmann::json cells = nlohmann::json::array();
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      const auto& c = row.cells[i];
      if (!c) {
        cells.push_back(nullptr);
        continue;
      }
      cells.push_back({{"status", outcome::to_string(c->status)},
                       {"gpu_time_ns", optional_number(c->gpu_time)},
                       {"host_time_ns", optional_number(c->host_time)},
                       {"gpu_time_ratio", optional_number(a.ratio(row, i, "gpu_time"))},
                       {"host_time_ratio", optional_number(a.ratio(row, i, "host_time"))},
                       {"kernels", optional_number(c->kernels)},
                       {"main_kernel", c->main_kernel.empty() ? nlohmann::json(nullptr) : nlohmann::json(c->main_kernel)},
                       {"occupancy", optional_number(c->occupancy)}});
    }
    j["experiments"].push_back({{"identity", row.identity}, {"runs", cells}});
  }
  return j;
}

namespace {

// Each experiment's `metric` per run on a log scale, and its ratio to the reference run.
std::vector<std::string> plots(const Across& a, const std::string& metric) {
  namespace plot = report::plot;
  std::vector<std::string> categories;
  for (const auto& row : a.experiments) categories.push_back(row.identity);
  // The legend has room for the model; the table above names the rest of the machine.
  const auto name = [&](std::size_t i) { return fmt::format("run {}: {}", i + 1, a.runs[i].machine.substr(0, a.runs[i].machine.find(" · "))); };
  plot::Chart values, ratios;
  for (auto* chart : {&values, &ratios}) {
    chart->x.label = "experiment";
    chart->x.categories = categories;
    chart->y.scale = plot::Scale::log;
  }
  values.title = fmt::format("{} per experiment", metric);
  values.subtitle = "the median of each run";
  values.y.label = metric;
  values.y.unit = plot::Unit::duration_ns;
  ratios.title = fmt::format("{} over run {}'s", metric, a.reference + 1);
  ratios.subtitle = "below 1: faster than the reference run";
  ratios.y.label = "ratio";
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    plot::Line value{name(i), i, {}}, ratio{name(i), i, {}};
    for (std::size_t x = 0; x < a.experiments.size(); ++x) {
      const auto& row = a.experiments[x];
      const auto v = row.cells[i] ? timing(*row.cells[i], metric) : std::nullopt;
      const auto r = a.ratio(row, i, metric);
      const auto nan = std::numeric_limits<double>::quiet_NaN();
      value.points.push_back({double(x), v.value_or(nan), {}, {}, v ? fmt::format("{} {}: {}", row.identity, name(i), util::format_duration(*v)) : ""});
      ratio.points.push_back({double(x), r.value_or(nan), {}, {}, r ? fmt::format("{} {}: {:.3f}×", row.identity, name(i), *r) : ""});
    }
    values.lines.push_back(std::move(value));
    ratios.lines.push_back(std::move(ratio));
  }
  return {plot::svg(values), plot::svg(ratios)};
}

}  // namespace

std::string html(const Across& a) {
  using report::plot::escape;
  std::string body = fmt::format("<header>\n<h1>{} across {} runs</h1>\n", escape(a.series), a.runs.size());
  body += fmt::format("<p class=\"meta\">Each run's verdicts and figures side by side; ratios to run {}. {}</p>\n", a.reference + 1,
                      escape(guesses_line(a)) + ".");
  body += "<nav><a href=\"#runs\">Runs</a><a href=\"#environment\">Environment</a><a href=\"#plots\">Plots</a><a href=\"#guesses\">Guesses</a>"
          "<a href=\"#experiments\">Experiments</a></nav>\n</header>\n";
  body += "<section id=\"runs\">\n<h2>Runs</h2>\n" + report::html_table(runs_table(a)) + "</section>\n";
  body += "<section id=\"environment\">\n<h2>Environment</h2>\n<p class=\"meta\">" + escape(environment_line(a)) + "</p>\n";
  if (!a.environment.empty()) body += report::html_table(environment_table(a, std::string::npos));
  body += "</section>\n<section id=\"plots\">\n<h2>Plots</h2>\n<div class=\"plots\">\n";
  for (const auto& metric : timed_metrics(a))
    for (const auto& svg : plots(a, metric)) body += "<figure>\n" + svg + "</figure>\n";
  body += "</div>\n</section>\n<section id=\"guesses\">\n<h2>Guesses</h2>\n<p class=\"meta\">" + escape(guesses_line(a)) + "</p>\n";
  body += report::html_table(guesses_table(a, std::string::npos));
  body += "</section>\n<section id=\"experiments\">\n<h2>Experiments</h2>\n" + report::html_table(experiments_table(a, std::string::npos)) + "</section>\n";
  return report::html_page(fmt::format("{} across {} runs — expr", a.series, a.runs.size()), body);
}

}  // namespace expr::history
