// The SVG charts of report.html (report/plot.hpp): axes a reader can read off, lines that break
// where a point has no value, and text that cannot break the markup.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "report/plot.hpp"

using namespace expr::report::plot;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Device times of a sweep over seq = 256 ... 8192, growing as seq² from 50 µs.
Chart sweep_chart() {
  Chart c;
  c.title = "Device time over seq";
  c.x = {"seq", Scale::log, Unit::number, {}, true, false, {}};
  c.y = {"Device time", Scale::log, Unit::duration_ns, {}, false, false, {}};
  Line line{"flash", 0, {}};
  for (double seq = 256; seq <= 8192; seq *= 2) line.points.push_back({seq, 50e3 * (seq / 256) * (seq / 256), {}, {}, ""});
  c.lines.push_back(line);
  return c;
}

std::vector<std::string> tick_labels(const std::string& svg, const std::string& anchor) {
  std::vector<std::string> out;
  const std::regex tick("<text x=\"[0-9.]+\" y=\"[0-9.]+\" text-anchor=\"" + anchor + "\" font-size=\"11\" fill=\"#555\">([^<]*)</text>");
  for (std::sregex_iterator it(svg.begin(), svg.end(), tick), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

}  // namespace

TEST_CASE("a log-log plot of times over powers of two has the sweep's values along x and decades of time along y") {
  const auto svg = expr::report::plot::svg(sweep_chart());
  CHECK(tick_labels(svg, "middle") == std::vector<std::string>{"256", "512", "1024", "2048", "4096", "8192"});
  // 50 µs to 51.2 ms: three decades, each labelled in its own unit.
  CHECK(tick_labels(svg, "end") == std::vector<std::string>{"100 µs", "1 ms", "10 ms"});
  CHECK(has(svg, "seq (log scale)"));
}

TEST_CASE("a linear axis from zero gets round steps, and a percentage stops at 100% when the data allow") {
  Chart c;
  c.x = {"size", Scale::linear, Unit::number, {}, false, false, {}};
  c.y = {"occupancy", Scale::linear, Unit::percent, {}, false, true, 1.0};
  c.lines.push_back({"k", 0, {{1000, 0.125, {}, {}, ""}, {3000, 0.5, {}, {}, ""}}});
  auto svg = expr::report::plot::svg(c);
  CHECK(tick_labels(svg, "end") == std::vector<std::string>{"0%", "10%", "20%", "30%", "40%", "50%", "60%"});
  CHECK(tick_labels(svg, "middle") == std::vector<std::string>{"1000", "1500", "2000", "2500", "3000"});
  c.lines[0].points[1].y = 1;
  svg = expr::report::plot::svg(c);
  CHECK(tick_labels(svg, "end") == std::vector<std::string>{"0%", "20%", "40%", "60%", "80%", "100%"});
}

TEST_CASE("a point without a value breaks its line instead of joining its neighbours") {
  auto c = sweep_chart();
  c.lines[0].points[3].y = std::numeric_limits<double>::quiet_NaN();
  const auto svg = expr::report::plot::svg(c);
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("class=\"line\" d=\"([^\"]*)\"")));
  const std::string d = m[1];
  CHECK(std::count(d.begin(), d.end(), 'M') == 2);
  CHECK(std::count(d.begin(), d.end(), 'L') == 3);
}

TEST_CASE("names and notes are escaped, so no text breaks the markup") {
  auto c = sweep_chart();
  c.lines[0].name = "a<b&\"c\"";
  c.notes.push_back({Tone::contradicted, "x < y & z"});
  const auto svg = expr::report::plot::svg(c);
  CHECK(has(svg, "a&lt;b&amp;&quot;c&quot;"));
  CHECK(has(svg, "x &lt; y &amp; z"));
  CHECK(has(svg, "✗"));
  CHECK(!has(svg, "a<b"));
}
