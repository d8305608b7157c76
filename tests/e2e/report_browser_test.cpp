// report.html and the page of `expr across` in a real browser: `expr replay` draws the report of
// the recorded H200 attention sweep, `expr across` the two recorded series-3 runs, and Debian's
// headless chromium opens them. A copy of the page with a script added measures
// what the browser laid out (each plot's size, the length of each line it drew, what it hit-tests
// at a marker) and writes it into the page, which chromium's --dump-dom prints. Without chromium the
// test says so and ctest counts it as skipped (tests/e2e/CMakeLists.txt); CI installs it
// (scripts/install-deps).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "harness.hpp"

namespace fs = std::filesystem;

namespace {

// Debian's chromium, or $EXPR_CHROMIUM.
std::optional<fs::path> chromium() {
  if (const char* chosen = std::getenv("EXPR_CHROMIUM")) return fs::path(chosen);
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    for (const char* name : {"chromium", "chromium-browser"})
      if (fs::exists(fs::path(dir) / name)) return fs::path(dir) / name;
  return std::nullopt;
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Opens `page` in headless chromium and returns the DOM once loaded (its scripts run).
std::string dump_dom(const fs::path& browser, const fs::path& page, const fs::path& scratch) {
  const auto out = scratch / "dom.html";
  // A profile of its own, so runs in parallel do not share one; no sandbox, as CI runs as root.
  const auto command = "'" + browser.string() + "' --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='" +
                       (scratch / "profile").string() + "' --window-size=1400,1000 --dump-dom 'file://" + page.string() + "' > '" + out.string() +
                       "' 2> '" + (scratch / "chromium.log").string() + "'";
  const int status = std::system(command.c_str());
  INFO("chromium's log:\n" << slurp(scratch / "chromium.log"));
  REQUIRE(status == 0);
  return slurp(out);
}

// What the report page shows beyond every page's plots (probe_in_browser): what is drawn in each
// plot, and the tables' rows.
constexpr const char* report_measures = R"((r, plots) => {
  Object.assign(r, {with_lines: 0, lines: 0, long_lines: 0, fits: 0, crossings: 0, sweep_rows: 0, guess_rows: 0, fit_files: []});
  for (const svg of plots) {
    const lines = [...svg.querySelectorAll('path.line')];
    r.lines += lines.length;
    const drawn = lines.filter(p => p.getTotalLength() > 100);
    r.long_lines += drawn.length;
    if (drawn.length > 0) ++r.with_lines;
    r.fits += [...svg.querySelectorAll('path.fit')].filter(p => p.getTotalLength() > 20).length;
    r.crossings += [...svg.querySelectorAll('path.crossing')].filter(p => p.getBBox().width > 5).length;
    if (svg.querySelector('path.fit')) r.fit_files.push(svg.closest('figure').querySelector('figcaption').textContent);
  }
  r.sweep_rows = document.querySelectorAll('#sweep-guesses tr.confirmed, #sweep-guesses tr.contradicted, #sweep-guesses tr.not-evaluable').length;
  r.guess_rows = document.querySelectorAll('#guesses tr.confirmed, #guesses tr.contradicted, #guesses tr.not-evaluable').length;
})";

// A page that opens offline: nothing that loads another file, and links only within the page.
void check_offline(const std::string& html) {
  for (const char* loads : {"<script", "<link", "<img", "<iframe", "<object", "<embed", " src=", "url(", "@import"})
    CHECK_MESSAGE(html.find(loads) == std::string::npos, loads);
  std::size_t links = 0;
  for (std::size_t at = 0; (at = html.find("href=\"", at)) != std::string::npos; ++at, ++links) CHECK(html.compare(at + 6, 1, "#") == 0);
  CHECK(links > 0);
}

// `html` opened in chromium with a script that measures, after layout, what every page of plots
// shows (each plot laid out at a readable size, its markers, whether the browser hit-tests the
// first one inside it) and then what `measures`, a function of the results and the plots, adds.
nlohmann::json probe_in_browser(const fs::path& browser, std::string html, const std::string& measures, const fs::path& dir) {
  const std::string script = R"(<script>
(() => {
  const r = {plots: 0, laid_out: 0, markers: 0, hit: 0};
  const plots = [...document.querySelectorAll('svg.expr-plot')];
  for (const svg of plots) {
    ++r.plots;
    const box = svg.getBoundingClientRect();
    if (box.width > 400 && box.height > 250) ++r.laid_out;
    const markers = svg.querySelectorAll('g.point > :last-child');
    r.markers += markers.length;
    // What the browser shows at the first marker's centre is part of this plot.
    const m = markers[0];
    if (m) {
      m.scrollIntoView({block: 'center'});
      const b = m.getBoundingClientRect();
      const at = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
      if (at && svg.contains(at)) ++r.hit;
    }
  }
  ()" + measures + R"()(r, plots);
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
})();
</script>
)";
  html.insert(html.rfind("</body>"), script);
  e2e::write(dir, "probe.html", html);
  const auto dom = dump_dom(browser, dir / "probe.html", dir);
  const auto begin = dom.find("<pre id=\"probe\">");
  REQUIRE_MESSAGE(begin != std::string::npos, "the probe did not run; the DOM was:\n" << dom.substr(0, 2000));
  const auto start = begin + std::string("<pre id=\"probe\">").size();
  return nlohmann::json::parse(dom.substr(start, dom.find("</pre>", start) - start));
}

// What the page of `expr across` shows beyond its plots: its guesses, and which comes first.
constexpr const char* across_measures = R"((r, plots) => {
  const rows = [...document.querySelectorAll('#guesses tr')].slice(1);
  r.guess_rows = rows.length;
  r.first_mark = rows.length ? rows[0].cells[0].textContent : '';
})";

}  // namespace

TEST_CASE("report.html of the recorded H200 attention sweep shows its plots and tables in headless chromium") {
  const auto browser = chromium();
  if (!browser) {
    std::cout << "SKIPPED: chromium is not installed (scripts/install-deps installs Debian's chromium); report.html was not opened in a browser\n";
    return;
  }
  const auto dir = e2e::scratch("report_browser");
  const auto o = e2e::expr(dir, "replay " EXPR_SOURCE_DIR "/tests/data/attention-sweep-h200 --out out");
  INFO(o.all());
  CHECK(o.exit_code == 0);  // every point ran, and no required guess is contradicted
  const auto page = dir / "out" / "report.html";
  REQUIRE(fs::exists(page));
  const auto html = slurp(page);

  check_offline(html);
  // The plots as files too, the same drawing as inlined.
  const auto device_bf16 = dir / "out" / "plots" / "seq-gpu_time-dtype_bf16.svg";
  REQUIRE(fs::exists(device_bf16));
  CHECK(html.find(slurp(device_bf16)) != std::string::npos);

  const auto r = probe_in_browser(*browser, html, report_measures, dir);
  INFO("measured in chromium: " << r.dump());
  // Along seq, for bf16 and fp16: device time, host time, TFLOP/s, GB/s, the main kernel's occupancy
  // and the peak memory (a guess about the sweep reads it).
  CHECK(r.at("plots") == 12);
  CHECK(r.at("laid_out") == 12);
  CHECK(r.at("with_lines") == 12);
  CHECK(r.at("hit") == 12);
  // One line per family (naive, math, efficient, flash, cudnn) on the 10 plots of times, rates and
  // memory; on the 2 occupancy plots one per kernel that was a point's main kernel: cuDNN's,
  // efficient's and flash's one each, math's four, naive's three.
  CHECK(r.at("lines") == 10 * 5 + 2 * 10);
  // The families' lines each over 100 units long, the plot area being 504 wide; a kernel that was
  // the main one at a point or two draws a short line.
  CHECK(r.at("long_lines") >= 10 * 5);
  // 60 points on 6 figures, each dtype on its own plots.
  CHECK(r.at("markers") == 6 * 60);
  // The guesses about the sweep: a fitted slope per family and dtype on the device time plots, and
  // naive's and flash's on the memory plots; cuDNN stays below flash at every seq, so no crossing
  // is drawn.
  CHECK(r.at("fits") == 2 * 5 + 2 * 2);
  CHECK(r.at("crossings") == 0);
  CHECK(r.at("fit_files") == nlohmann::json::array({"plots/seq-gpu_time-dtype_bf16.svg", "plots/seq-peak_memory-dtype_bf16.svg",
                                                    "plots/seq-gpu_time-dtype_fp16.svg", "plots/seq-peak_memory-dtype_fp16.svg"}));
  // The tables: every guess about the sweep (10 guesses, one verdict per dtype) and about each point.
  const auto recorded = e2e::read_json(EXPR_SOURCE_DIR "/tests/data/attention-sweep-h200/results.json");
  CHECK(r.at("sweep_rows") == recorded.at("sweep_guesses").size());
  std::size_t guesses = 0;
  for (const auto& e : recorded.at("experiments")) guesses += e2e::guesses(e).size();
  CHECK(r.at("guess_rows") == guesses);
}

TEST_CASE("the page of expr across shows the runs' plots and their guesses, those that differ first, in headless chromium") {
  const auto browser = chromium();
  if (!browser) {
    std::cout << "SKIPPED: chromium is not installed (scripts/install-deps installs Debian's chromium); the across page was not opened in a browser\n";
    return;
  }
  const auto dir = e2e::scratch("across_browser");
  const auto o = e2e::expr(dir, "across " EXPR_SOURCE_DIR "/tests/data/series3-h200 " EXPR_SOURCE_DIR "/tests/data/series3-counters-h200 --html across.html");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  const auto html = slurp(dir / "across.html");
  check_offline(html);
  const auto r = probe_in_browser(*browser, html, across_measures, dir);
  INFO("measured in chromium: " << r.dump());
  // gpu_time and host_time per experiment, and each over run 1's: four plots, every one laid out.
  CHECK(r.at("plots") == 4);
  CHECK(r.at("laid_out") == 4);
  CHECK(r.at("hit") == 4);
  // Seven experiments, two runs, on each plot.
  CHECK(r.at("markers") == 4 * 7 * 2);
  CHECK(r.at("guess_rows") == 84);
  CHECK(r.at("first_mark") == "≠");
}
