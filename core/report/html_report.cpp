// report.html and its plots (html_report.hpp): what to draw for a run, and the page around it.
#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "analysis/metrics.hpp"
#include "report/plot.hpp"
#include "report/summary.hpp"
#include "series/plan.hpp"
#include "util/units.hpp"

namespace expr::report {

namespace {

using plot::escape;
using plot::Tone;

Tone tone_of(const JudgedGuess& g) {
  if (!g.judgement) return Tone::plain;
  switch (g.judgement->verdict) {
    case expect::Verdict::confirmed: return Tone::confirmed;
    case expect::Verdict::contradicted: return Tone::contradicted;
    case expect::Verdict::not_evaluable: return Tone::unknown;
  }
  return Tone::unknown;
}

// "2.185", "not evaluable: ...", or "pending".
std::string outcome_text(const JudgedGuess& g) {
  if (!g.judgement) return "pending";
  if (g.judgement->verdict == expect::Verdict::not_evaluable) return "not evaluable: " + g.judgement->reason;
  return g.judgement->observed;
}

// ---- What a plot shows --------------------------------------------------------------------------

// A figure plotted over an axis, and where its noise comes from.
struct Figure {
  enum class Noise { none, device, host, throughput };
  std::string key;    // in file names
  std::string title;  // also the y axis's label
  analysis::MetricCall metric;
  plot::Unit unit = plot::Unit::number;
  Noise noise = Noise::none;
  std::string about;  // what is drawn, as the chart's first note
};

bool same_metric(const analysis::MetricCall& a, const analysis::MetricCall& b) {
  return a.metric == b.metric && a.args == b.args && a.field == b.field && a.cold == b.cold;
}

const std::vector<Figure>& main_figures() {
  static const std::string timing = "median per point; band: the middle half of the samples (25th to 75th percentile); whiskers: min to max";
  static const std::string throughput = "the plugin's work model over the median time; band and whiskers from the same time samples";
  static const std::vector<Figure> figures{
      {"gpu_time", "Device time", {"gpu_time", {}, ""}, plot::Unit::duration_ns, Figure::Noise::device,
       "CUDA-event time per call, " + timing + " (a sample is the mean of a batch of back-to-back calls)."},
      {"host_time", "Host time", {"host_time", {}, ""}, plot::Unit::duration_ns, Figure::Noise::host,
       "Host time of one run() call, the device idle before it, " + timing + "."},
      {"tflops", "TFLOP/s", {"tflops", {}, ""}, plot::Unit::number, Figure::Noise::throughput, "TFLOP/s: " + throughput + "."},
      {"gbps", "GB/s", {"gbps", {}, ""}, plot::Unit::number, Figure::Noise::throughput, "GB/s: " + throughput + "."},
      {"occupancy", "Occupancy of the main kernel", {"kernel", {}, "occupancy"}, plot::Unit::percent, Figure::Noise::none,
       "Theoretical occupancy of the kernel with the most device time, from its launch footprint: one line per kernel, in its "
       "variant's colour, so a line never joins two different kernels."},
      {"achieved_occupancy", "Achieved occupancy of the main kernel", {"kernel", {}, "achieved_occupancy"}, plot::Unit::percent,
       Figure::Noise::none,
       "Achieved occupancy of the same kernel, from hardware counters over one iteration (only where the series turned counters on)."},
  };
  return figures;
}

// A figure for a sweep guess's metric that is none of the main ones.
Figure figure_for(const JudgedSweepGuess& v) {
  Figure f{"", v.metric_text, v.metric, plot::Unit::number, Figure::Noise::none, v.metric_text + " per point, as the guesses about the sweep read it."};
  for (char c : v.metric_text) f.key += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ? c : '_';
  if (const auto* spec = analysis::find_metric(v.metric.metric)) {
    const auto display = analysis::result_type(*spec, v.metric).display;
    f.unit = display == analysis::Display::duration ? plot::Unit::duration_ns : display == analysis::Display::percent ? plot::Unit::percent : plot::Unit::number;
  }
  return f;
}

std::string shown(double v, plot::Unit unit) {
  switch (unit) {
    case plot::Unit::duration_ns: return util::format_duration(v);
    case plot::Unit::percent: return util::format_percent(v);
    case plot::Unit::number: break;
  }
  return fmt::format("{:.4g}", v);
}

double percentile(const std::vector<double>& sorted, double q) {
  const double at = q * double(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const auto above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - double(below));
}

// One experiment's value of a figure, with its noise and the text shown on hover.
std::optional<plot::Point> reading(const ExperimentResult& e, const Figure& f, double x) {
  const auto& m = e.measurement;
  analysis::Outcome o;
  try {
    o = analysis::evaluate(m, f.metric);
  } catch (const std::exception&) {  // a trace that cannot be read: the point has no value here, and the guesses say why
    return std::nullopt;
  }
  const auto* obs = std::get_if<analysis::Observation>(&o);
  const auto* q = obs && !obs->absent ? std::get_if<analysis::Quantity>(&obs->value) : nullptr;
  if (!q || !std::isfinite(q->value)) return std::nullopt;
  plot::Point p{x, q->value, {}, {}, fmt::format("{}\n{}: {}", m.experiment, f.title, shown(q->value, f.unit))};
  const outcome::Stats* stats = nullptr;
  if (f.noise == Figure::Noise::device || (f.noise == Figure::Noise::throughput && m.device_time)) stats = m.device_time ? &*m.device_time : nullptr;
  else if (f.noise != Figure::Noise::none) stats = m.host ? &*m.host : nullptr;
  if (!stats || stats->median <= 0 || stats->min <= 0) return p;
  // Throughput is work over time: its noise is the time's, turned over.
  const auto scaled = [&](double t) { return f.noise == Figure::Noise::throughput ? q->value * stats->median / t : t; };
  const auto between = [&](double a, double b) { return std::pair{std::min(scaled(a), scaled(b)), std::max(scaled(a), scaled(b))}; };
  if (stats->samples.size() >= 2) {
    auto sorted = stats->samples;
    std::sort(sorted.begin(), sorted.end());
    p.band = between(percentile(sorted, 0.25), percentile(sorted, 0.75));
    p.tooltip += fmt::format("\nmiddle half: {} to {}", shown(p.band->first, f.unit), shown(p.band->second, f.unit));
  }
  p.whiskers = between(stats->min, stats->max);
  p.tooltip += fmt::format("\nmin to max: {} to {}\n{} samples, spread {}", shown(p.whiskers->first, f.unit), shown(p.whiskers->second, f.unit),
                           stats->count, util::format_percent(stats->spread));
  return p;
}

// The name of the kernel with the most device time, which the occupancy figures describe, as a
// legend has room for it: without its return type, anonymous namespaces, template arguments and
// parameters ("at::native::cunn_SoftMaxForward").
std::string main_kernel_name(const outcome::Measurement& m) {
  try {
    const auto o = analysis::evaluate(m, {"kernel", {}, "name"});
    if (const auto* obs = std::get_if<analysis::Observation>(&o))
      if (const auto* text = std::get_if<std::string>(&obs->value)) {
        auto name = text->starts_with("void ") ? text->substr(5) : *text;
        static constexpr std::string_view anonymous = "(anonymous namespace)::";
        for (auto at = name.find(anonymous); at != std::string::npos; at = name.find(anonymous)) name.erase(at, anonymous.size());
        return name.substr(0, name.find_first_of("<("));
      }
  } catch (const std::exception&) {  // a trace that cannot be read: the point has no kernel to name
  }
  return "?";
}

// ---- Axes and panels ----------------------------------------------------------------------------

struct AxisInfo {
  std::string name;
  std::vector<ParamValue> values;  // in the order the run first has them
  bool numeric = true, powers_of_two = true;
};

std::optional<double> number(const ParamValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return double(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

std::vector<AxisInfo> axes_of(const RunResult& run) {
  std::vector<AxisInfo> axes;
  for (const auto& e : run.experiments)
    for (const auto& [name, value] : e.point) {
      // Named again for the lambda: clang before 16 cannot capture a structured binding.
      auto it = std::find_if(axes.begin(), axes.end(), [&axis_name = name](const AxisInfo& a) { return a.name == axis_name; });
      if (it == axes.end()) it = axes.insert(axes.end(), AxisInfo{name, {}, true, true});
      if (std::find(it->values.begin(), it->values.end(), value) != it->values.end()) continue;
      it->values.push_back(value);
      const auto* i = std::get_if<std::int64_t>(&value);
      it->numeric = it->numeric && number(value);
      it->powers_of_two = it->powers_of_two && i && *i > 0 && (*i & (*i - 1)) == 0;
    }
  for (auto& a : axes) a.powers_of_two = a.powers_of_two && a.values.size() >= 2;
  return axes;
}

// A point's values on the axes other than `axis`, as expect/sweep.cpp names a group: "dtype=bf16".
std::string panel_of(const series::AxisPoint& point, const std::string& axis) {
  std::string out;
  for (const auto& [name, value] : point)
    if (name != axis) out += (out.empty() ? "" : ",") + name + "=" + series::to_string(value);
  return out;
}

const ParamValue* value_on(const series::AxisPoint& point, const std::string& axis) {
  const auto it = std::find_if(point.begin(), point.end(), [&](const auto& kv) { return kv.first == axis; });
  return it == point.end() ? nullptr : &it->second;
}

std::string file_part(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return out;
}

// The guesses about the sweep drawn on a chart: the fitted line, the crossing, the broken trend.
void draw(const JudgedSweepGuess& v, std::size_t style, const plot::Line* line, plot::Chart& chart) {
  const auto tone = tone_of(v.guess);
  auto note = fmt::format("{}: {} → {}", v.family, v.guess.spec.check, outcome_text(v.guess));
  if (v.guess.judgement && v.guess.judgement->verdict == expect::Verdict::contradicted) note += fmt::format(" (guessed {})", v.guess.judgement->guessed);
  chart.notes.push_back({tone, note});
  const auto& g = v.geometry;
  if (g.fit) {
    plot::Mark m{plot::Mark::Shape::curve, {}, style, tone, fmt::format("{} slope {}", v.family, v.guess.judgement ? v.guess.judgement->observed : "")};
    constexpr int steps = 24;
    for (int i = 0; i <= steps; ++i) {
      const double x = g.fit->from * std::pow(g.fit->to / g.fit->from, double(i) / steps);
      m.points.emplace_back(x, std::exp(g.fit->intercept + g.fit->slope * std::log(x)));
    }
    chart.marks.push_back(std::move(m));
  }
  if (g.crossing)
    chart.marks.push_back({plot::Mark::Shape::crossing, {*g.crossing}, style, tone,
                           fmt::format("{} = {} at {} ≈ {}", v.family, v.other, v.axis, v.guess.judgement ? v.guess.judgement->observed : "")});
  if (g.broken && line) {
    plot::Mark m{plot::Mark::Shape::rings, {}, style, tone, v.family + ": " + v.guess.judgement->observed.substr(0, v.guess.judgement->observed.find(' '))};
    for (const auto& p : line->points)
      if ((p.x == g.broken->first || p.x == g.broken->second) && std::isfinite(p.y)) m.points.emplace_back(p.x, p.y);
    chart.marks.push_back(std::move(m));
  }
}

// The run's families in the order it first has them. A family's index is its style (colour and
// marker), the same in every plot.
std::vector<std::string> families_of(const RunResult& run) {
  std::vector<std::string> families;
  for (const auto& e : run.experiments)
    if (std::find(families.begin(), families.end(), e.family) == families.end()) families.push_back(e.family);
  return families;
}

std::size_t style_of(const std::vector<std::string>& families, const std::string& family) {
  return std::size_t(std::find(families.begin(), families.end(), family) - families.begin());
}

// A categorical axis goes along x only when no numeric one can: in a sweep with a numeric axis
// beside it, it splits panels instead.
bool goes_along_x(const AxisInfo& axis, const std::vector<AxisInfo>& axes, const RunResult& run) {
  if (axis.numeric || std::none_of(axes.begin(), axes.end(), [](const AxisInfo& a) { return a.numeric; })) return true;
  return std::none_of(run.experiments.begin(), run.experiments.end(), [&](const ExperimentResult& e) {
    return value_on(e.point, axis.name) && std::any_of(e.point.begin(), e.point.end(), [&](const auto& kv) {
             return std::any_of(axes.begin(), axes.end(), [&](const AxisInfo& a) { return a.name == kv.first && a.numeric; });
           });
  });
}

// Where a value lies along x: the number itself, or a category's index.
double x_of(const AxisInfo& axis, const ParamValue& v) {
  return axis.numeric ? *number(v) : double(std::find(axis.values.begin(), axis.values.end(), v) - axis.values.begin());
}

std::vector<std::string> panels_of(const RunResult& run, const AxisInfo& axis) {
  std::vector<std::string> panels;
  for (const auto& e : run.experiments)
    if (value_on(e.point, axis.name))
      if (const auto p = panel_of(e.point, axis.name); std::find(panels.begin(), panels.end(), p) == panels.end()) panels.push_back(p);
  return panels;
}

// The experiments of one panel, in x order.
std::vector<const ExperimentResult*> panel_members(const RunResult& run, const AxisInfo& axis, const std::string& panel) {
  std::vector<const ExperimentResult*> members;
  for (const auto& e : run.experiments)
    if (value_on(e.point, axis.name) && panel_of(e.point, axis.name) == panel) members.push_back(&e);
  std::stable_sort(members.begin(), members.end(), [&](const ExperimentResult* a, const ExperimentResult* b) {
    return x_of(axis, *value_on(a->point, axis.name)) < x_of(axis, *value_on(b->point, axis.name));
  });
  return members;
}

// The main figures, then any other metric a guess about this axis reads.
std::vector<Figure> figures_along(const RunResult& run, const AxisInfo& axis) {
  auto figures = main_figures();
  for (const auto& v : run.sweep_guesses)
    if (v.axis == axis.name && !v.metric.metric.empty() &&
        std::none_of(figures.begin(), figures.end(), [&](const Figure& f) { return same_metric(f.metric, v.metric); }))
      figures.push_back(figure_for(v));
  return figures;
}

// A chart with no lines yet: its title, its axes' scales and what the figure shows.
plot::Chart empty_chart(const RunResult& run, const AxisInfo& axis, const std::string& panel, const Figure& figure) {
  plot::Chart chart;
  chart.title = fmt::format("{} over {}", figure.title, axis.name);
  chart.subtitle = panel.empty() ? run.series : fmt::format("{} · {}", panel, run.series);
  chart.x.label = axis.name;
  chart.x.scale = axis.powers_of_two ? plot::Scale::log : plot::Scale::linear;
  chart.x.ticks_at_data = axis.numeric;
  if (!axis.numeric)
    for (const auto& v : axis.values) chart.x.categories.push_back(series::to_string(v));
  chart.y.label = figure.title;
  chart.y.unit = figure.unit;
  chart.y.scale = axis.powers_of_two && figure.unit == plot::Unit::duration_ns ? plot::Scale::log : plot::Scale::linear;
  chart.y.from_zero = chart.y.scale == plot::Scale::linear;
  if (figure.unit == plot::Unit::percent) chart.y.most = 1;
  chart.notes.push_back({Tone::plain, figure.about});
  return chart;
}

// An experiment that has no value because it did not run: its status, and the reason's first
// sentence (the whole of it is in the tables).
std::string not_run_line(const outcome::Measurement& m) {
  const auto sentence = m.reason.find(". ");
  return fmt::format("{} {}{}", m.experiment, outcome::to_string(m.status),
                     m.reason.empty() ? "" : ": " + m.reason.substr(0, sentence == std::string::npos ? sentence : sentence + 1));
}

// What one figure draws of a panel's experiments.
struct FigureLines {
  std::vector<plot::Line> lines;
  bool any_value = false;
  std::vector<std::string> not_run;  // not_run_line of each experiment that did not run
};

// One line per family; a figure of the main kernel draws one line per kernel instead, named by the
// kernel alone (the colour and marker say the variant): where another kernel becomes the main one,
// its line starts, rather than one line joining different kernels.
FigureLines figure_lines(const std::vector<const ExperimentResult*>& members, const AxisInfo& axis, const Figure& figure, const std::vector<std::string>& families) {
  FigureLines out;
  for (const auto& family : families) {
    std::vector<plot::Line> kernel_lines;
    plot::Line line{family, style_of(families, family), {}};
    for (const auto* e : members) {
      if (e->family != family) continue;
      const double x = x_of(axis, *value_on(e->point, axis.name));
      auto p = reading(*e, figure, x);
      out.any_value = out.any_value || p.has_value();
      if (figure.metric.metric == "kernel") {
        if (!p) continue;
        const auto kernel = main_kernel_name(e->measurement);
        auto it = std::find_if(kernel_lines.begin(), kernel_lines.end(), [&](const plot::Line& l) { return l.name == kernel; });
        if (it == kernel_lines.end()) it = kernel_lines.insert(kernel_lines.end(), plot::Line{kernel, style_of(families, family), {}});
        p->tooltip += "\nkernel: " + kernel;
        it->points.push_back(std::move(*p));
        continue;
      }
      line.points.push_back(p ? std::move(*p) : plot::Point{x, std::numeric_limits<double>::quiet_NaN(), {}, {}, {}});
      if (e->measurement.status != outcome::Status::ok) out.not_run.push_back(not_run_line(e->measurement));
    }
    if (!line.points.empty()) out.lines.push_back(std::move(line));
    for (auto& l : kernel_lines) out.lines.push_back(std::move(l));
  }
  return out;
}

// The figure's chart for one panel, or nothing when no experiment there has a value of it.
std::optional<plot::Chart> figure_chart(const RunResult& run, const AxisInfo& axis, const std::string& panel,
                                        const std::vector<const ExperimentResult*>& members, const Figure& figure, const std::vector<std::string>& families) {
  auto drawn = figure_lines(members, axis, figure, families);
  if (!drawn.any_value) return std::nullopt;
  auto chart = empty_chart(run, axis, panel, figure);
  chart.lines = std::move(drawn.lines);
  for (std::size_t i = 0; i < drawn.not_run.size() && i < 3; ++i) chart.notes.push_back({Tone::plain, "No value: " + drawn.not_run[i]});
  if (drawn.not_run.size() > 3)
    chart.notes.push_back({Tone::plain, fmt::format("No value either for {} more points that did not run.", drawn.not_run.size() - 3)});
  for (const auto& v : run.sweep_guesses) {
    if (v.axis != axis.name || v.group != panel || !same_metric(v.metric, figure.metric)) continue;
    const auto line = std::find_if(chart.lines.begin(), chart.lines.end(), [&](const plot::Line& l) { return l.name == v.family; });
    draw(v, style_of(families, v.family), line == chart.lines.end() ? nullptr : &*line, chart);
  }
  return chart;
}

// "seq-gpu_time-dtype_bf16.svg", numbered when two panels read alike once cleaned for a file name.
std::string plot_file(const AxisInfo& axis, const Figure& figure, const std::string& panel, std::set<std::string>& files) {
  const auto name = file_part(axis.name) + "-" + figure.key + (panel.empty() ? "" : "-" + file_part(panel));
  auto file = name;
  for (int n = 2; files.count(file + ".svg"); ++n) file = fmt::format("{}-{}", name, n);
  files.insert(file + ".svg");
  return file + ".svg";
}

}  // namespace

std::vector<Plot> sweep_plots(const RunResult& run) {
  const auto families = families_of(run);
  const auto axes = axes_of(run);
  std::vector<Plot> plots;
  std::set<std::string> files;
  for (const auto& axis : axes) {
    if (!goes_along_x(axis, axes, run)) continue;
    const auto figures = figures_along(run, axis);
    for (const auto& panel : panels_of(run, axis)) {
      const auto members = panel_members(run, axis, panel);
      for (const auto& figure : figures)
        if (const auto chart = figure_chart(run, axis, panel, members, figure, families))
          plots.push_back({plot_file(axis, figure, panel, files), axis.name, panel, plot::svg(*chart)});
    }
  }
  return plots;
}

// ---- The page -----------------------------------------------------------------------------------

namespace {

constexpr const char* style_sheet = R"(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', Helvetica, Arial, sans-serif; color: #222; background: #fafafa;
       margin: 0 auto; padding: 1.5rem 2rem 4rem; max-width: 1720px; line-height: 1.45; }
h1 { margin: 0 0 .3rem; font-size: 1.7rem; }
h2 { margin: 2.2rem 0 .6rem; font-size: 1.3rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
h3 { margin: 1.4rem 0 .4rem; font-size: 1.05rem; color: #444; }
p.meta, p.description { margin: .2rem 0; color: #555; }
code { font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: .92em; }
nav a { margin-right: 1rem; }
a { color: #0b62a4; }
.tally { font-size: 1.05rem; margin: .8rem 0; }
.tally span { display: inline-block; margin-right: .6rem; padding: .15rem .6rem; border-radius: .8rem; background: #eee; }
.confirmed .mark, .tally .confirmed { color: #00704f; }
.contradicted .mark, .tally .contradicted { color: #b34700; }
.not-evaluable .mark, .tally .not-evaluable { color: #666; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 1rem; }
figure { margin: 0; background: white; border: 1px solid #e2e2e2; border-radius: 6px; padding: .4rem; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { font-size: .8rem; color: #777; padding: 0 .4rem; }
table { border-collapse: collapse; background: white; font-size: .88rem; margin: .4rem 0 1rem; }
th, td { border: 1px solid #e2e2e2; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f0f0f0; position: sticky; top: 0; }
td.mark { font-weight: 700; text-align: center; }
tr.contradicted td:first-child { box-shadow: inset 3px 0 #d55e00; }
tr.confirmed td:first-child { box-shadow: inset 3px 0 #009e73; }
tr.not-evaluable td:first-child { box-shadow: inset 3px 0 #999; }
p.gate-fails, p.gate-passes { font-weight: 600; padding: .3rem .6rem; border-radius: 4px; }
p.gate-fails { background: #fbe9e0; color: #8a3600; }
p.gate-passes { background: #e3f4ee; color: #00573d; }
td.evidence { max-width: 48rem; color: #555; font-size: .82rem; word-break: break-word; }
td.reason { max-width: 72rem; color: #555; font-size: .82rem; word-break: break-word; }
.scroll { overflow-x: auto; }
)";

// How a guess's verdict shows in a table: its row's class and its mark.
struct VerdictLook {
  const char* row_class;
  const char* mark;
};

VerdictLook look_of(const JudgedGuess& g) {
  switch (tone_of(g)) {
    case Tone::confirmed: return {"confirmed", "✓"};
    case Tone::contradicted: return {"contradicted", "✗"};
    case Tone::unknown: return {"not-evaluable", "?"};
    case Tone::plain: break;
  }
  return {"pending", "…"};
}

std::string where(const JudgedGuess& g) {
  if (g.spec.origin == series::GuessOrigin::plugin) return "plugin guess";
  return g.spec.pos().line > 0 ? g.spec.pos().str() : "series";
}

// The cells after a guess's verdict, guess and sweep or experiment: observed, guessed, evidence, where.
std::string guess_cells_tail(const JudgedGuess& g) {
  const auto& j = g.judgement;
  const auto why = g.spec.why.empty() ? "" : "<br><i>" + escape(g.spec.why) + "</i>";
  // A guess that could not be judged has a reason instead of figures, often a long one (a failed
  // experiment's message): it gets the width of the three figure columns, not that of one.
  if (!j || j->verdict == expect::Verdict::not_evaluable)
    return fmt::format("<td class=\"reason\" colspan=\"3\">{}{}</td><td>{}</td>", escape(outcome_text(g)), why, escape(where(g)));
  return fmt::format("<td>{}</td><td>{}</td><td class=\"evidence\">{}{}</td><td>{}</td>", escape(j->observed), escape(j->guessed),
                     escape(j->evidence), why, escape(where(g)));
}

}  // namespace

std::string html_table(const Table& t) {
  std::string out = "<div class=\"scroll\"><table>\n<tr>";
  for (const auto& h : t.header) out += "<th>" + escape(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const auto& c : row) out += "<td>" + escape(c) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table></div>\n";
}

std::string html_page(const std::string& title, const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      escape(title), style_sheet, body);
}

namespace {

// The page's top: the series, the run, the tally of verdicts and the links to the sections.
std::string page_header(const RunResult& run, const std::vector<Plot>& plots, const std::vector<PageSection>& first) {
  const auto t = tally(run);
  std::string out = fmt::format("<header>\n<h1>{}</h1>\n", escape(run.series));
  if (!run.description.empty()) out += "<p class=\"description\">" + escape(run.description) + "</p>\n";
  const auto env = [&](const char* key) { const auto it = run.environment.find(key); return it == run.environment.end() ? std::string() : it->second; };
  out += fmt::format("<p class=\"meta\">Run <code>{}</code> of <code>{}</code>, started {}, {}; expr <code>{}</code>{}.</p>\n", escape(run.id),
                     escape(run.series_file), escape(run.started), run.finished.empty() ? "still running" : "finished " + escape(run.finished),
                     escape(run.revision), env("gpu").empty() ? "" : ", on " + escape(env("gpu")));
  out += fmt::format(
      "<p class=\"tally\">Guess vs trace: <span class=\"confirmed\">✓ {} confirmed</span><span class=\"contradicted\">✗ {} contradicted</span>"
      "<span class=\"not-evaluable\">? {} not evaluable</span> {} experiments{}.</p>\n",
      t.confirmed, t.contradicted, t.not_evaluable, run.experiments.size(), t.experiments_failed ? fmt::format(", {} did not run to the end", t.experiments_failed) : "");
  out += "<nav>";
  for (const auto& s : first) out += fmt::format("<a href=\"#{}\">{}</a>", escape(s.id), escape(s.heading));
  if (!plots.empty()) out += "<a href=\"#plots\">Plots</a>";
  if (!run.sweep_guesses.empty()) out += "<a href=\"#sweep-guesses\">Guesses about whole sweeps</a>";
  return out + "<a href=\"#guesses\">Guess vs trace</a><a href=\"#experiments\">Experiments side by side</a><a href=\"#environment\">Environment</a></nav>\n</header>\n";
}

// The plots inlined, a heading per axis and a grid per panel.
std::string plots_section(const std::vector<Plot>& plots) {
  if (plots.empty()) return "";
  std::string out = "<section id=\"plots\">\n<h2>Plots</h2>\n";
  std::string axis, panel;
  bool open = false;
  for (const auto& p : plots) {
    if (p.axis != axis || p.panel != panel || !open) {
      if (open) out += "</div>\n";
      if (p.axis != axis) out += fmt::format("<h3>Along {}</h3>\n", escape(p.axis));
      if (!p.panel.empty()) out += fmt::format("<p class=\"meta\">{}</p>\n", escape(p.panel));
      out += "<div class=\"plots\">\n";
      axis = p.axis;
      panel = p.panel;
      open = true;
    }
    out += fmt::format("<figure>\n{}<figcaption>plots/{}</figcaption>\n</figure>\n", p.svg, escape(p.file));
  }
  return out + "</div>\n</section>\n";
}

// A table row of a guess's verdict, what it is about (a sweep or an experiment), the guess, and the rest.
std::string guess_row(const JudgedGuess& g, const std::string& about) {
  const auto look = look_of(g);
  return fmt::format(R"(<tr class="{}"><td class="mark">{}</td><td>{}</td><td><code>{}</code>{}</td>)", look.row_class, look.mark, escape(about),
                     escape(g.spec.check), g.spec.required ? " (required)" : "") + guess_cells_tail(g) + "</tr>\n";
}

std::string sweep_guesses_section(const RunResult& run) {
  if (run.sweep_guesses.empty()) return "";
  std::string out = "<section id=\"sweep-guesses\">\n<h2>Guesses about whole sweeps</h2>\n<div class=\"scroll\"><table>\n"
                    "<tr><th></th><th>sweep</th><th>guess</th><th>observed</th><th>guessed</th><th>evidence</th><th>from</th></tr>\n";
  for (const auto& s : run.sweep_guesses) out += guess_row(s.guess, s.group.empty() ? s.family : s.family + "[" + s.group + "]");
  return out + "</table></div>\n</section>\n";
}

// `not_listed` says which experiments the tables leave out, if any.
std::string guesses_section(const std::vector<const ExperimentResult*>& listed, const std::string& not_listed) {
  std::string out = "<section id=\"guesses\">\n<h2>Guess vs trace</h2>\n" + not_listed + "<div class=\"scroll\"><table>\n"
                    "<tr><th></th><th>experiment</th><th>guess</th><th>observed</th><th>guessed</th><th>evidence</th><th>from</th></tr>\n";
  for (const auto* e : listed)
    for (const auto& g : e->guesses) out += guess_row(g, e->measurement.experiment);
  return out + "</table></div>\n</section>\n";
}

// The figures side by side, then why an experiment did not run to its end or its device timing is suspect.
std::string experiments_section(const std::vector<const ExperimentResult*>& listed, const std::string& not_listed) {
  std::string out = "<section id=\"experiments\">\n<h2>Experiments side by side</h2>\n" + not_listed + html_table(comparison_table(listed));
  std::string reasons;
  for (const auto* e : listed) {
    const auto& m = e->measurement;
    if (!m.reason.empty())
      reasons += fmt::format("<li><code>{}</code> {}: {}</li>\n", escape(m.experiment), escape(std::string(outcome::to_string(m.status))),
                             escape(m.reason));
    // A device timing that is suspect, or not what gpu_time usually is, is said where it is read.
    for (const auto* note : {&m.timing_warning, &m.queue_not_held})
      if (!note->empty()) reasons += fmt::format("<li class=\"warning\"><code>{}</code> gpu_time: {}</li>\n", escape(m.experiment), escape(*note));
  }
  if (!reasons.empty()) out += "<ul>\n" + reasons + "</ul>\n";
  return out + "</section>\n";
}

std::string environment_section(const RunResult& run) {
  Table environment{{"key", "value"}, {}};
  for (const auto& [k, v] : run.environment) environment.rows.push_back({k, v});
  return "<section id=\"environment\">\n<h2>Environment</h2>\n" + html_table(environment) + "</section>\n";
}

}  // namespace

std::string html_report(const RunResult& run, const std::vector<Plot>& plots, const std::vector<PageSection>& first) {
  // A sweep of thousands of points lists the experiments that need a look; the plots above cover
  // every point, and results.json and summary.md hold every one.
  const auto [brief, listed, needing_a_look] = listing(run, listed_at_most);
  const auto not_listed =
      brief ? fmt::format("<p class=\"meta\">Of {} experiments, {}; the other {} ran with every guess confirmed and are not listed here "
                          "(every one is in <code>results.json</code> and <code>summary.md</code>, and <code>expr show --all</code> lists "
                          "them).</p>\n",
                          run.experiments.size(), escape(needing_a_look_line(listed.size(), needing_a_look)), run.experiments.size() - needing_a_look)
            : std::string();
  std::string sections;
  for (const auto& s : first) sections += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", escape(s.id), escape(s.heading), s.body);
  const auto body = page_header(run, plots, first) + sections + plots_section(plots) + sweep_guesses_section(run) + guesses_section(listed, not_listed) +
                    experiments_section(listed, not_listed) + environment_section(run);
  return html_page(run.series + " — expr report", body);
}

}  // namespace expr::report
