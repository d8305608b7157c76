// Line charts as SVG: the one drawing code behind the plots of report.html (inlined) and the
// plots/*.svg files (for Markdown). Pure C++ with no script, font file or network, so a run on a
// machine without a browser or a package registry draws them; docs/report.md says why this is not a
// charting library. It knows nothing of runs: html_report.cpp says what to draw.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace expr::report::plot {

enum class Scale { linear, log };
enum class Unit { number, duration_ns, percent };  // how tick labels read: 812, "1.2 ms", "50%"

struct Axis {
  std::string label;
  Scale scale = Scale::linear;
  Unit unit = Unit::number;
  std::vector<std::string> categories;  // non-empty: a categorical axis; a point's x is its index
  bool ticks_at_data = false;           // ticks at the data's own x values (a sweep's points), not round numbers
  bool from_zero = false;               // a linear axis that starts at 0
  std::optional<double> most;           // where a linear axis ends at the latest when the data allow (1 for 100%)
};

// One point of a line. A NaN y is a point without a value: the line breaks there.
struct Point {
  double x = 0, y = 0;
  std::optional<std::pair<double, double>> band;      // shaded between these, e.g. the middle half of the samples
  std::optional<std::pair<double, double>> whiskers;  // an error bar between these, e.g. min and max
  std::string tooltip;                                // shown on hover, in browsers and SVG viewers
};

// A line, drawn in the colour and marker of its style (an index into a colour-blind-safe palette
// of colours and marker shapes, so a line is told apart without its colour too).
struct Line {
  std::string name;
  std::size_t style = 0;
  std::vector<Point> points;  // in x order
};

enum class Tone { confirmed, contradicted, unknown, plain };

// Something drawn over the lines: a guess and what it rests on.
struct Mark {
  enum class Shape {
    curve,     // a dashed line through `points` in the style's colour (a fitted power law)
    crossing,  // a marked point at points[0], with a vertical guide (where two lines cross)
    rings,     // rings around `points` (where a trend breaks)
  };
  Shape shape = Shape::curve;
  std::vector<std::pair<double, double>> points;
  std::size_t style = 0;
  Tone tone = Tone::plain;
  std::string label;  // short, next to the mark
};

// A line of text under the plot, with a ✓, ✗ or ? in front unless it is plain.
struct Note {
  Tone tone = Tone::plain;
  std::string text;
};

struct Chart {
  std::string title, subtitle;
  Axis x, y;
  std::vector<Line> lines;
  std::vector<Mark> marks;
  std::vector<Note> notes;
};

// A complete <svg> element, usable inline in HTML and as a file on its own.
std::string svg(const Chart& chart);

// The palette's colour of a style, as #rrggbb, for HTML next to the plots.
std::string colour(std::size_t style);

// Text escaped for XML and HTML.
std::string escape(const std::string& text);

}  // namespace expr::report::plot
