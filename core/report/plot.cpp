// Line charts as SVG (plot.hpp): scales and ticks, then the drawing, back to front.
#include "report/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "util/units.hpp"

namespace expr::report::plot {

namespace {

// Okabe and Ito's palette, told apart with every common colour-vision deficiency; its yellow is
// left out, too pale on white. Marker shapes cycle with the colours, so lines differ in print too.
constexpr const char* palette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"};
constexpr std::size_t palette_size = std::size(palette);
constexpr std::size_t marker_shapes = 6;

constexpr const char* font = "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', Helvetica, Arial, sans-serif";
constexpr const char* ink = "#222", *muted = "#555", *grid = "#e4e4e4", *minor_grid = "#f2f2f2";

// The layout, in SVG user units (pixels at 100%): the plot area, the legend right of it, the
// notes under it.
constexpr double width = 780, plot_left = 76, plot_right = 580, plot_top = 56, plot_bottom = 356;
constexpr double legend_left = plot_right + 18, note_top = plot_bottom + 50, note_height = 17;
constexpr std::size_t legend_chars = 24, note_chars = 110;

const char* tone_colour(Tone t) {
  switch (t) {
    case Tone::confirmed: return "#009E73";
    case Tone::contradicted: return "#D55E00";
    case Tone::unknown: return "#777777";
    case Tone::plain: return muted;
  }
  return muted;
}

const char* glyph(Tone t) {
  switch (t) {
    case Tone::confirmed: return "✓";
    case Tone::contradicted: return "✗";
    case Tone::unknown: return "?";
    case Tone::plain: return "";
  }
  return "";
}

// Cuts text to `n` characters (code points), ending in "…".
std::string clip(const std::string& s, std::size_t n) {
  const auto starts = [&](std::size_t i) { return (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80; };
  std::size_t chars = 0, cut = s.size();
  for (std::size_t i = 0; i < s.size(); ++i)
    if (starts(i) && ++chars == n) cut = i;
  return chars <= n ? s : s.substr(0, cut) + "…";
}

// Text cut at spaces into lines of at most `width` characters; at most `most` lines, the last
// ending in "…" when there was more.
std::vector<std::string> wrap(const std::string& text, std::size_t width, std::size_t most) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t chars = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const auto word = text.substr(at, end - at);
    std::size_t word_chars = 0;
    for (char ch : word) word_chars += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    if (chars > 0 && chars + 1 + word_chars > width) {
      lines.push_back(line);
      line.clear();
      chars = 0;
    }
    line += (chars > 0 ? " " : "") + word;
    chars += (chars > 0 ? 1 : 0) + word_chars;
    at = end + 1;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  if (lines.size() > most) {
    lines.resize(most);
    lines.back() = clip(lines.back() + " …", width);
  }
  for (auto& l : lines) l = clip(l, width);  // a single word longer than the line
  return lines;
}

std::string px(double v) { return fmt::format("{:.1f}", v); }

// Where along an axis a value lies, from 0 at `lo` to 1 at `hi`.
class Scaled {
 public:
  Scaled(Scale scale, double lo, double hi, double from, double to) : log_(scale == Scale::log), lo_(f(lo)), hi_(f(hi)), from_(from), to_(to) {}
  double operator()(double v) const { return from_ + (f(v) - lo_) / (hi_ - lo_) * (to_ - from_); }

 private:
  double f(double v) const { return log_ ? std::log10(v) : v; }
  bool log_;
  double lo_, hi_, from_, to_;
};

struct Tick {
  double value;
  bool labelled;
};

struct Range {
  double lo = 0, hi = 1;
  std::vector<Tick> ticks;
};

std::string tick_label(double v, Unit unit) {
  switch (unit) {
    case Unit::duration_ns: return std::fabs(v) < 1e-9 ? "0" : util::format_duration(v);
    case Unit::percent: return util::format_percent(v);
    case Unit::number: break;
  }
  if (std::fabs(v) < 1e-12) return "0";
  return util::format_number(std::stod(fmt::format("{:.4g}", v)));
}

// A round step that cuts `span` into three to six parts: 1, 2, 2.5 or 5 times a power of ten.
double round_step(double span) {
  const double raw = span / 6;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * magnitude >= raw * 0.999) return m * magnitude;
  return 10 * magnitude;
}

std::vector<Tick> linear_ticks(double lo, double hi) {
  const double step = round_step(hi - lo);
  std::vector<Tick> out;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push_back({std::fabs(v) < step * 1e-9 ? 0 : v, true});
  return out;
}

// Padded a little so that no point sits on the frame; an axis from zero ends at a round step, or
// at `most` when the data reach no further.
Range linear_range(double lo, double hi, const Axis& axis) {
  if (axis.from_zero) lo = std::min(lo, 0.0);
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
  const bool capped = axis.most && hi <= *axis.most;
  const double pad = (hi - lo) * 0.05;
  hi += pad;
  if (!axis.from_zero) lo -= pad;
  else hi = std::ceil(hi / round_step(hi - lo) - 1e-9) * round_step(hi - lo);
  if (capped) hi = std::min(hi, *axis.most);
  return {lo, hi, linear_ticks(lo, hi)};
}

// Decades labelled; where the range spans few of them, 2 and 5 times a decade too, and below one
// decade round linear steps. The other multiples are unlabelled grid lines.
Range log_range(double lo, double hi) {
  const double span = std::max(std::log10(hi / lo), 0.3);
  const double pad = span * 0.06;
  Range r{std::pow(10, std::log10(lo) - pad), std::pow(10, std::log10(hi) + pad), {}};
  const double decades = std::log10(r.hi / r.lo);
  for (int k = static_cast<int>(std::floor(std::log10(r.lo))); k <= static_cast<int>(std::ceil(std::log10(r.hi))); ++k)
    for (int m = 1; m <= 9; ++m) {
      const double v = m * std::pow(10, k);
      if (v < r.lo || v > r.hi) continue;
      const bool labelled = m == 1 || (decades < 2.5 && (m == 2 || m == 5));
      if (labelled || decades <= 6) r.ticks.push_back({v, labelled});
    }
  if (std::count_if(r.ticks.begin(), r.ticks.end(), [](const Tick& t) { return t.labelled; }) < 2) r.ticks = linear_ticks(r.lo, r.hi);
  return r;
}

// The axis's range over the data's `values` and the `marks` drawn over them, with its ticks.
Range range(const Axis& axis, std::vector<double> values, const std::vector<double>& marks) {
  if (!axis.categories.empty()) {
    Range r{-0.5, double(axis.categories.size()) - 0.5, {}};
    for (std::size_t i = 0; i < axis.categories.size(); ++i) r.ticks.push_back({double(i), true});
    return r;
  }
  const auto drawable = [&](double v) { return std::isfinite(v) && (axis.scale == Scale::linear || v > 0); };
  std::erase_if(values, [&](double v) { return !drawable(v); });
  if (values.empty()) values = axis.scale == Scale::log ? std::vector<double>{1, 10} : std::vector<double>{0, 1};
  double lo = *std::min_element(values.begin(), values.end()), hi = *std::max_element(values.begin(), values.end());
  for (double v : marks)
    if (drawable(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!axis.ticks_at_data) return axis.scale == Scale::log ? log_range(lo, hi) : linear_range(lo, hi, axis);
  // A sweep's own values as ticks, the range padded a little so the end points do not sit on the frame.
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  Range r;
  if (axis.scale == Scale::log) {
    const double pad = std::max(std::log10(hi / lo), 0.3) * 0.05;
    r = {std::pow(10, std::log10(lo) - pad), std::pow(10, std::log10(hi) + pad), {}};
  } else {
    const double pad = std::max(hi - lo, std::fabs(lo) * 0.1 + 1e-9) * 0.05;
    r = {lo - pad, hi + pad, {}};
  }
  // Every value labelled when there is room; otherwise every n-th, the last always.
  const std::size_t every = (values.size() + 11) / 12;
  for (std::size_t i = 0; i < values.size(); ++i) r.ticks.push_back({values[i], i % every == 0 || i + 1 == values.size()});
  return r;
}

// A marker of `style` centred at (x, y).
std::string marker(std::size_t style, double x, double y) {
  const auto c = colour(style);
  const auto attrs = fmt::format(R"(fill="{}" stroke="white" stroke-width="0.8")", c);
  const double s = 4.2;
  switch (style % marker_shapes) {
    case 0: return fmt::format(R"(<circle cx="{}" cy="{}" r="{}" {}/>)", px(x), px(y), px(s), attrs);
    case 1: return fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" {}/>)", px(x - s * 0.85), px(y - s * 0.85), px(s * 1.7), px(s * 1.7), attrs);
    case 2: return fmt::format(R"(<path d="M{} {}L{} {}L{} {}Z" {}/>)", px(x), px(y - s * 1.1), px(x + s), px(y + s * 0.8), px(x - s), px(y + s * 0.8), attrs);
    case 3: return fmt::format(R"(<path d="M{} {}L{} {}L{} {}L{} {}Z" {}/>)", px(x), px(y - s * 1.2), px(x + s), px(y), px(x), px(y + s * 1.2), px(x - s), px(y), attrs);
    case 4: return fmt::format(R"(<path d="M{} {}L{} {}L{} {}Z" {}/>)", px(x), px(y + s * 1.1), px(x + s), px(y - s * 0.8), px(x - s), px(y - s * 0.8), attrs);
    default: return fmt::format(R"(<circle cx="{}" cy="{}" r="{}" fill="white" stroke="{}" stroke-width="1.8"/>)", px(x), px(y), px(s * 0.85), c);
  }
}

// Text with a white halo, readable over lines and grid.
std::string label(double x, double y, const std::string& anchor, const std::string& body) {
  return fmt::format(R"(<text x="{}" y="{}" text-anchor="{}" font-size="11" fill="{}" stroke="white" stroke-width="3" stroke-linejoin="round" paint-order="stroke">{}</text>)",
                     px(x), px(y), anchor, ink, body);
}

std::string toned(Tone tone, const std::string& text) {
  if (tone == Tone::plain) return escape(text);
  return fmt::format(R"(<tspan fill="{}" font-weight="700">{}</tspan> {})", tone_colour(tone), glyph(tone), escape(text));
}

}  // namespace

std::string colour(std::size_t style) { return palette[style % palette_size]; }

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// A y value that can be drawn: finite, and above 0 on a log scale.
bool drawable_y(const Chart& c, double y) { return std::isfinite(y) && (c.y.scale == Scale::linear || y > 0); }

// The chart placed in the plot area: the axes' ranges, where a value lands, and what can be drawn.
struct Layout {
  const Chart& c;
  bool categorical;
  Range xr, yr;
  Scaled X, Y;
  // Side by side around each x value rather than on top of each other: on a categorical axis the
  // lines' markers, on a numeric one only their whiskers (the markers stay at their true x).
  double marker_step, whisker_step;

  bool usable(double y) const { return drawable_y(c, y); }
  double clamp_y(double y) const { return std::clamp(c.y.scale == Scale::log && y <= 0 ? yr.lo : y, yr.lo, yr.hi); }
  double dodge(std::size_t line, double step) const { return (double(line) - double(c.lines.size() - 1) / 2) * step; }
};

// Everything drawn sets the ranges, so nothing falls outside the frame.
Layout layout(const Chart& c) {
  const bool categorical = !c.x.categories.empty();
  std::vector<double> xs, ys, mark_xs, mark_ys;
  for (const auto& line : c.lines)
    for (const auto& p : line.points) {
      xs.push_back(p.x);
      if (!drawable_y(c, p.y)) continue;
      ys.push_back(p.y);
      for (const auto& extra : {p.band, p.whiskers})
        if (extra) ys.insert(ys.end(), {extra->first, extra->second});
    }
  for (const auto& m : c.marks)
    for (const auto& [x, y] : m.points) mark_xs.push_back(x), mark_ys.push_back(y);
  const auto xr = range(c.x, xs, mark_xs), yr = range(c.y, ys, mark_ys);
  return {c,
          categorical,
          xr,
          yr,
          Scaled(categorical ? Scale::linear : c.x.scale, xr.lo, xr.hi, plot_left, plot_right),
          Scaled(c.y.scale, yr.lo, yr.hi, plot_bottom, plot_top),
          categorical ? 12.0 : 0.0,
          categorical ? 12.0 : 2.5};
}

using WrappedNotes = std::vector<std::pair<const Note*, std::vector<std::string>>>;

WrappedNotes wrapped_notes(const Chart& c) {
  WrappedNotes wrapped;
  for (const auto& n : c.notes) wrapped.emplace_back(&n, wrap(n.text, note_chars, 3));
  return wrapped;
}

// The <svg> element's opening, as tall as the notes need, with the title and subtitle.
std::string heading(const Chart& c, const WrappedNotes& notes) {
  std::size_t note_lines = 0;
  for (const auto& [note, lines] : notes) note_lines += lines.size();
  const double height = note_top + double(note_lines) * note_height + 6;
  std::string out = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="expr-plot" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="{f}" role="img" aria-label="{t}">)"
      "\n<title>{t}</title>\n"
      R"(<rect width="{w}" height="{h}" fill="white"/>)"
      "\n",
      fmt::arg("w", px(width)), fmt::arg("h", px(height)), fmt::arg("f", font), fmt::arg("t", escape(c.title + (c.subtitle.empty() ? "" : " — " + c.subtitle))));
  out += fmt::format(R"(<text x="{}" y="24" font-size="15" font-weight="600" fill="{}">{}</text>)", px(plot_left), ink, escape(c.title)) + "\n";
  if (!c.subtitle.empty()) out += fmt::format(R"(<text x="{}" y="42" font-size="12" fill="{}">{}</text>)", px(plot_left), muted, escape(c.subtitle)) + "\n";
  return out;
}

// Grid, ticks and axis labels.
std::string grid_and_axes(const Layout& l) {
  const auto& c = l.c;
  std::string out;
  for (const auto& t : l.yr.ticks) {
    const double y = l.Y(t.value);
    out += fmt::format(R"(<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}"/>)", px(plot_left), px(plot_right), px(y), px(y), t.labelled ? grid : minor_grid);
    if (t.labelled)
      out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" font-size="11" fill="{}">{}</text>)", px(plot_left - 6), px(y + 4), muted,
                         escape(tick_label(t.value, c.y.unit)));
    out += "\n";
  }
  for (const auto& t : l.xr.ticks) {
    const double x = l.X(t.value);
    out += fmt::format(R"(<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}"/>)", px(x), px(x), px(plot_top), px(plot_bottom), t.labelled ? grid : minor_grid);
    out += fmt::format(R"(<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#999"/>)", px(x), px(x), px(plot_bottom), px(plot_bottom + 4));
    if (t.labelled)
      out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="11" fill="{}">{}</text>)", px(x), px(plot_bottom + 17), muted,
                         escape(l.categorical ? c.x.categories[std::size_t(t.value)] : tick_label(t.value, c.x.unit)));
    out += "\n";
  }
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="12" fill="{}">{}</text>)", px((plot_left + plot_right) / 2),
                     px(plot_bottom + 38), ink, escape(c.x.label + (c.x.scale == Scale::log && !l.categorical ? " (log scale)" : "")));
  out += fmt::format(R"~(<text transform="translate(16 {}) rotate(-90)" text-anchor="middle" font-size="12" fill="{}">{}</text>)~",
                     px((plot_top + plot_bottom) / 2), ink, escape(c.y.label + (c.y.scale == Scale::log ? " (log scale)" : ""))) + "\n";
  return out;
}

// A line's bands as shaded areas over each unbroken run of points with one (numeric axes only).
std::string band_areas(const Layout& l, const Line& line) {
  std::string out;
  std::vector<const Point*> run;
  const auto flush = [&] {
    if (run.size() >= 2 && !l.categorical) {
      std::string d;
      for (const auto* p : run) d += fmt::format("{}{} {}", d.empty() ? "M" : "L", px(l.X(p->x)), px(l.Y(l.clamp_y(p->band->second))));
      for (auto it = run.rbegin(); it != run.rend(); ++it) d += fmt::format("L{} {}", px(l.X((*it)->x)), px(l.Y(l.clamp_y((*it)->band->first))));
      out += fmt::format(R"(<path class="band" d="{}Z" fill="{}" fill-opacity="0.16" stroke="none"/>)", d, colour(line.style)) + "\n";
    }
    run.clear();
  };
  for (const auto& p : line.points) {
    if (l.usable(p.y) && p.band) run.push_back(&p);
    else flush();
  }
  flush();
  return out;
}

// Line `li`'s whiskers, and on a categorical axis its bands as bars, dodged beside the other lines'.
std::string whiskers(const Layout& l, std::size_t li) {
  const auto& line = l.c.lines[li];
  const auto col = colour(line.style);
  std::string out;
  for (const auto& p : line.points) {
    if (!l.usable(p.y)) continue;
    const double x = l.X(p.x) + l.dodge(li, l.whisker_step);
    if (l.categorical && p.band)
      out += fmt::format(R"(<rect class="band" x="{}" y="{}" width="8" height="{}" fill="{}" fill-opacity="0.3"/>)", px(x - 4),
                         px(l.Y(l.clamp_y(p.band->second))), px(std::max(0.5, l.Y(l.clamp_y(p.band->first)) - l.Y(l.clamp_y(p.band->second)))), col) + "\n";
    if (!p.whiskers) continue;
    const double lo = l.Y(l.clamp_y(p.whiskers->first)), hi = l.Y(l.clamp_y(p.whiskers->second));
    out += fmt::format(R"(<path class="whisker" d="M{x} {lo}V{hi}M{a} {lo}H{b}M{a} {hi}H{b}" stroke="{c}" stroke-width="1" fill="none"/>)",
                       fmt::arg("x", px(x)), fmt::arg("lo", px(lo)), fmt::arg("hi", px(hi)), fmt::arg("a", px(x - 3)), fmt::arg("b", px(x + 3)),
                       fmt::arg("c", col)) + "\n";
  }
  return out;
}

// The lines through the medians, broken where a point has no value; none across categories.
std::string median_lines(const Layout& l) {
  std::string out;
  if (l.categorical) return out;
  for (const auto& line : l.c.lines) {
    std::string d;
    bool pen_down = false;
    for (const auto& p : line.points) {
      if (!l.usable(p.y)) {
        pen_down = false;
        continue;
      }
      d += fmt::format("{}{} {}", pen_down ? "L" : "M", px(l.X(p.x)), px(l.Y(p.y)));
      pen_down = true;
    }
    if (!d.empty())
      out += fmt::format(R"(<path class="line" d="{}" fill="none" stroke="{}" stroke-width="1.8" stroke-linejoin="round"/>)", d, colour(line.style)) + "\n";
  }
  return out;
}

std::string point_markers(const Layout& l) {
  std::string out;
  for (std::size_t li = 0; li < l.c.lines.size(); ++li)
    for (const auto& p : l.c.lines[li].points) {
      if (!l.usable(p.y)) continue;
      out += fmt::format(R"(<g class="point"><title>{}</title>{}</g>)", escape(p.tooltip),
                         marker(l.c.lines[li].style, l.X(p.x) + l.dodge(li, l.marker_step), l.Y(p.y))) + "\n";
    }
  return out;
}

// A mark's label and where it goes, before the labels are kept apart.
struct Placed {
  double x, y;
  std::string anchor, body;
};

// A guess's mark over the data; its label, if it has one, is added to `labels`.
std::string guess_mark(const Layout& l, const Mark& m, std::vector<Placed>& labels) {
  const auto body = m.label.empty() ? std::string() : toned(m.tone, m.label);
  std::string out;
  switch (m.shape) {
    case Mark::Shape::curve: {
      std::string d;
      for (const auto& [x, y] : m.points) d += fmt::format("{}{} {}", d.empty() ? "M" : "L", px(l.X(x)), px(l.Y(l.clamp_y(y))));
      // Dark over the family's own line, which it follows where the fit is good.
      out += fmt::format(R"(<path class="fit" d="{}" fill="none" stroke="{}" stroke-width="1.6" stroke-dasharray="6 3"/>)", d, ink) + "\n";
      // In the top left corner, stacked: at the curve's end a label lay over the data. Sweeps
      // mostly grow, so that corner is the emptiest; the label names its family.
      if (!body.empty()) labels.push_back({plot_left + 8, plot_top + 14, "start", body});
      break;
    }
    case Mark::Shape::crossing: {
      const double x = l.X(m.points[0].first), y = l.Y(l.clamp_y(m.points[0].second));
      out += fmt::format(R"(<line class="crossing-guide" x1="{x}" x2="{x}" y1="{t}" y2="{b}" stroke="{c}" stroke-width="1.2" stroke-dasharray="2 3"/>)",
                         fmt::arg("x", px(x)), fmt::arg("t", px(plot_top)), fmt::arg("b", px(plot_bottom)), fmt::arg("c", ink));
      out += fmt::format(R"(<path class="crossing" d="M{} {}l6 6l-6 6l-6 -6Z" fill="white" stroke="{}" stroke-width="2"/>)", px(x), px(y - 6), ink) + "\n";
      const bool right_half = x > (plot_left + plot_right) / 2;
      if (!body.empty()) labels.push_back({x + (right_half ? -6 : 6), plot_top + 14, right_half ? "end" : "start", body});
      break;
    }
    case Mark::Shape::rings:
      for (const auto& [x, y] : m.points)
        out += fmt::format(R"(<circle class="ring" cx="{}" cy="{}" r="9" fill="none" stroke="{}" stroke-width="2"/>)", px(l.X(x)), px(l.Y(l.clamp_y(y))),
                           tone_colour(Tone::contradicted)) + "\n";
      if (!body.empty()) labels.push_back({l.X(m.points.back().first) + 12, l.Y(l.clamp_y(m.points.back().second)) + 4, "start", body});
      break;
  }
  return out;
}

// The guesses over the data, their labels kept apart vertically inside the frame.
std::string guess_marks(const Layout& l) {
  std::string out;
  std::vector<Placed> labels;
  for (const auto& m : l.c.marks)
    if (!m.points.empty()) out += guess_mark(l, m, labels);
  std::sort(labels.begin(), labels.end(), [](const Placed& a, const Placed& b) { return a.y < b.y; });
  for (std::size_t i = 0; i < labels.size(); ++i) {
    labels[i].y = std::clamp(labels[i].y, plot_top + 12, plot_bottom - 4);
    if (i > 0 && labels[i].y < labels[i - 1].y + 13) labels[i].y = labels[i - 1].y + 13;
    out += label(labels[i].x, labels[i].y, labels[i].anchor, labels[i].body) + "\n";
  }
  return out;
}

// The legend: each line, then the keys to the guesses' marks when there are any.
std::string legend(const Chart& c) {
  std::string out;
  double ly = plot_top + 8;
  for (const auto& line : c.lines) {
    out += fmt::format(R"(<g class="legend-entry"><line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}" stroke-width="1.8"/>{}<text x="{}" y="{}" font-size="12" fill="{}">{}</text></g>)",
                       px(legend_left), px(legend_left + 24), px(ly), px(ly), colour(line.style), marker(line.style, legend_left + 12, ly),
                       px(legend_left + 32), px(ly + 4), ink, escape(clip(line.name, legend_chars))) + "\n";
    ly += 19;
  }
  const auto has = [&](Mark::Shape s) { return std::any_of(c.marks.begin(), c.marks.end(), [&](const Mark& m) { return m.shape == s; }); };
  if (!c.marks.empty()) ly += 6;
  if (has(Mark::Shape::curve)) {
    out += fmt::format(R"(<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}" stroke-width="1.6" stroke-dasharray="6 3"/><text x="{}" y="{}" font-size="12" fill="{}">fitted power law</text>)",
                       px(legend_left), px(legend_left + 24), px(ly), px(ly), ink, px(legend_left + 32), px(ly + 4), ink) + "\n";
    ly += 19;
  }
  if (has(Mark::Shape::crossing)) {
    out += fmt::format(R"(<path d="M{} {}l6 6l-6 6l-6 -6Z" fill="white" stroke="{}" stroke-width="2"/><text x="{}" y="{}" font-size="12" fill="{}">crossover</text>)",
                       px(legend_left + 12), px(ly - 6), ink, px(legend_left + 32), px(ly + 4), ink) + "\n";
    ly += 19;
  }
  if (has(Mark::Shape::rings)) {
    out += fmt::format(R"(<circle cx="{}" cy="{}" r="7" fill="none" stroke="{}" stroke-width="2"/><text x="{}" y="{}" font-size="12" fill="{}">trend broken</text>)",
                       px(legend_left + 12), px(ly), tone_colour(Tone::contradicted), px(legend_left + 32), px(ly + 4), ink) + "\n";
  }
  return out;
}

// The notes, wrapped; the verdict's mark on the first line of each.
std::string notes(const WrappedNotes& wrapped) {
  std::string out;
  double ny = note_top;
  for (const auto& [note, lines] : wrapped) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      out += fmt::format(R"(<text class="note" x="{}" y="{}" font-size="12" fill="{}">{}</text>)", i == 0 ? 12 : 26, px(ny),
                         note->tone == Tone::plain ? muted : ink, i == 0 ? toned(note->tone, lines[i]) : escape(lines[i])) + "\n";
      ny += note_height;
    }
  }
  return out;
}

}  // namespace

// Back to front: the grid, the noise under the lines, the lines and their markers, the guesses, the
// frame, then the legend and the notes beside and under it.
std::string svg(const Chart& c) {
  const auto l = layout(c);
  const auto wrapped = wrapped_notes(c);
  std::string out = heading(c, wrapped) + grid_and_axes(l);
  for (std::size_t li = 0; li < c.lines.size(); ++li) out += band_areas(l, c.lines[li]) + whiskers(l, li);
  out += median_lines(l) + point_markers(l) + guess_marks(l);
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)", px(plot_left), px(plot_top), px(plot_right - plot_left),
                     px(plot_bottom - plot_top)) + "\n";
  return out + legend(c) + notes(wrapped) + "</svg>\n";
}

}  // namespace expr::report::plot
