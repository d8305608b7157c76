// Sweeps: axes in the series file expand to one experiment per point, each with a stable identity
// that results.json, the run directory, --filter and the guesses of other experiments use.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "harness.hpp"

namespace {

using e2e::has;

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  REQUIRE_MESSAGE(in, "missing " << file.string());
  return {std::istreambuf_iterator<char>(in), {}};
}

e2e::Outcome validate(const std::string& name, const std::string& text, const std::string& options = "") {
  const auto dir = e2e::scratch("sweep_" + name);
  e2e::write(dir, "series.yaml", text);
  return e2e::expr(dir, "validate series.yaml " + options);
}

const std::string quick = R"(series: sweep
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}
)";

}  // namespace

TEST_CASE("axes expand to the cartesian product, listed by validate with their identities in axis order") {
  const auto o = validate("product", quick + R"(experiments:
  - name: sums
    plugin: faulty
    axes:
      fault: [none, wrong_result]
      size: pow2(1024, 4096)
    exclude: [{fault: wrong_result, size: ">2048"}]
)");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "  sums[fault=none,size=1024]\n  sums[fault=none,size=2048]\n  sums[fault=none,size=4096]\n"
                   "  sums[fault=wrong_result,size=1024]\n  sums[fault=wrong_result,size=2048]\n5 experiments\n"));
}

TEST_CASE("range() includes its end, zip moves axes together") {
  const auto o = validate("zip", quick + R"(experiments:
  - name: sums
    plugin: faulty
    axes:
      size: range(1000, 3000, 1000)
      fault: [none, none, wrong_result]
    zip: [[size, fault]]
)");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "  sums[size=1000,fault=none]\n  sums[size=2000,fault=none]\n  sums[size=3000,fault=wrong_result]\n3 experiments\n"));
}

TEST_CASE("mistakes in axes are reported at their place before anything runs") {
  const auto o = validate("mistakes", quick + R"(experiments:
  - name: sums
    plugin: faulty
    axes: {sise: [1, 2], fault: [none, hung]}
  - name: zipped
    plugin: faulty
    axes: {size: [1, 2, 3], fault: [none, abort]}
    zip: [[size, fault]]
  - name: everything_excluded
    plugin: faulty
    axes: {size: [1, 2]}
    exclude: [{size: [1, 2]}]
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "series.yaml:8:12: error: plugin faulty has no parameter 'sise'; did you mean 'size'?"));
  CHECK(has(o.err, "series.yaml:8:40: error: parameter 'fault' is one of"));
  CHECK(has(o.err, "series.yaml:12:12: error: zip: axes 'size' (3 values) and 'fault' (2 values) must have as many values"));
  CHECK(has(o.err, "series.yaml:13:11: error: the sweep of everything_excluded expands to zero points"));
}

// Read before the plugins are asked anything: a range with no values is reported on its own.
TEST_CASE("a range that expands to nothing is reported at its place") {
  const auto o = validate("empty_range", quick + R"(experiments:
  - name: empty
    plugin: faulty
    axes:
      size: range(10, 1, 1)
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "series.yaml:9:13: error: 'range(10, 1, 1)' expands to zero points"));
}

TEST_CASE("a sweep larger than max_points is refused with its count unless the limit is raised") {
  const auto sweep = R"(experiments:
  - name: big
    plugin: faulty
    axes:
      size: range(1, 10001, 1)
)";
  const auto refused = validate("big", quick + sweep);
  INFO(refused.all());
  CHECK(refused.exit_code == 2);
  CHECK(has(refused.err, "'range(1, 10001, 1)' expands to 10001 values, more than max_points (10000)"));
  const auto raised = validate("big_raised", "max_points: 10001\n" + quick + sweep);
  CHECK(raised.exit_code == 0);
  CHECK(has(raised.out, "10001 experiments"));
}

TEST_CASE("--axis replaces an axis's values, or makes a parameter an axis, and names itself in errors") {
  const std::string series = quick + R"(experiments:
  - name: sums
    plugin: faulty
    axes: {size: [1, 2, 3]}
)";
  const auto o = validate("override", series, "--axis size=7,8 --axis fault=none,wrong_result");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "  sums[size=7,fault=none]\n  sums[size=7,fault=wrong_result]\n  sums[size=8,fault=none]\n"));
  const auto bad = validate("override_bad", series, "--axis size=seven --axis sise=1");
  INFO(bad.all());
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "--axis size=seven: error: parameter 'size' is a whole number, not 'seven'"));
  CHECK(has(bad.err, "--axis sise=1: error: no experiment's plugin has a parameter 'sise'"));
}

TEST_CASE("a run records each point under its identity, with its family and axis values, and guesses read the matching point" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("sweep_run");
  e2e::write(dir, "series.yaml", quick + R"(experiments:
  - name: small
    plugin: faulty
    axes: {size: [1000, 2000]}
    expect:
      - host_time < big.host_time
      - host_time < both.host_time
  - name: big
    plugin: faulty
    axes: {size: [1000, 2000]}
  - name: both
    plugin: faulty
    axes: {size: [1000, 2000], fault: [none, wrong_result]}
)");
  const auto dry = e2e::expr(dir, "run series.yaml --dry-run --filter none");
  CHECK(dry.exit_code == 0);
  CHECK(has(dry.out, "8 experiments"));
  CHECK(!std::filesystem::exists(dir / "run"));

  const auto o = e2e::expr(dir, "run series.yaml --out run --filter '^(small|big)\\['");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  CHECK(results.at("planned") == 8);
  const auto& point = e2e::experiment(results, "small[size=2000]");
  CHECK(point.at("family") == "small");
  CHECK(point.at("axes") == nlohmann::json::array({"size"}));
  CHECK(point.at("point").at("size") == 2000);
  CHECK(std::filesystem::exists(dir / "run" / "experiments" / "small[size=2000]" / "worker.log"));
  const auto& like = e2e::guess(point, "host_time < big.host_time");
  CHECK(has(like.at("evidence").get<std::string>(), "big read as big[size=2000]"));
  const auto& ambiguous = e2e::guess(point, "host_time < both.host_time");
  CHECK(ambiguous.at("verdict") == "not evaluable");
  CHECK(has(ambiguous.at("reason").get<std::string>(), "both has 2 points with size=2000: they differ in fault"));
}

TEST_CASE("guesses about a whole sweep: a slope confirmed, one contradicted, a monotonic growth and a crossover" * e2e::runs_experiments) {
  // sleeper's run() takes base_us * (size/1024)^k: quadratic = 50 µs * x², linear = 140 µs * x,
  // equal at x = 2.8 (size 2867); interpolating between 2048 and 4096 gives about 2435.
  const auto dir = e2e::scratch("sweep_guesses");
  e2e::write(dir, "series.yaml", R"(series: growth
defaults:
  device: cpu
  # 40 samples: the median's 95% interval then leaves out the calls a loaded machine preempted (with 3 to 15 it spanned them)
  iterations: {warmup: 1, traced: 1, min_samples: 40, min_time: 0.02, max_time: 1}
  axes:
    size: pow2(1024, 4096)
experiments:
  - name: quadratic
    plugin: sleeper
    params: {k: 2, base_us: 50}
    sweep_expect:
      - slope(host_time, size) ~ 2 ± 0.3
      - check: slope(host_time, size) ~ 1 ± 0.3
        why: wrong on purpose
      - monotonic(host_time, size, increasing)
      - crossover(host_time, size, linear) ~ 2500 within 25%
  - name: linear
    plugin: sleeper
    params: {k: 1, base_us: 140}
    sweep_expect:
      - slope(host_time, size, from=2048) ~ 1 ± 0.3
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  const auto sweep = [&](const std::string& check) {
    for (const auto& g : results.at("sweep_guesses"))
      if (g.at("check") == check) return g;
    FAIL("no sweep guess " << check);
    return nlohmann::json{};
  };
  const auto right = sweep("slope(host_time, size) ~ 2 ± 0.3");
  CHECK(right.at("verdict") == "confirmed");
  CHECK(right.at("family") == "quadratic");
  CHECK(has(right.at("evidence").get<std::string>(), "log-log fit over 3 points: size=1024: "));
  CHECK(sweep("slope(host_time, size) ~ 1 ± 0.3").at("verdict") == "contradicted");
  CHECK(sweep("monotonic(host_time, size, increasing)").at("verdict") == "confirmed");
  CHECK(sweep("crossover(host_time, size, linear) ~ 2500 within 25%").at("verdict") == "confirmed");
  const auto partial = sweep("slope(host_time, size, from=2048) ~ 1 ± 0.3");
  CHECK(partial.at("verdict") == "confirmed");
  CHECK(has(partial.at("evidence").get<std::string>(), "over 2 points"));
  CHECK(has(o.out, "slope(host_time, size) ~ 1 ± 0.3"));  // the terminal report lists it

  // report.html and its plots: on the host time plot, each slope's fitted line, the crossing, and
  // every verdict under the plot (report_browser_test.cpp opens a report in a browser).
  const auto html = read_text(dir / "run" / "report.html");
  const auto plot = read_text(dir / "run" / "plots" / "size-host_time.svg");
  CHECK(has(html, plot));
  const auto count = [](const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  CHECK(count(plot, "<path class=\"fit\"") == 3);
  CHECK(count(plot, "<path class=\"crossing\"") == 1);
  CHECK(count(plot, "<path class=\"line\"") == 2);
  CHECK(has(plot, ">✗</tspan> quadratic: slope(host_time, size) ~ 1 ± 0.3 → "));
  CHECK(has(plot, ">✓</tspan> quadratic: crossover(host_time, size, linear) ~ 2500 within 25% → "));
  CHECK(has(html, "<section id=\"sweep-guesses\">"));
}

TEST_CASE("a sweep guess naming an unknown axis or metric is reported at its place") {
  const auto o = validate("sweep_guess_bad", quick + R"(experiments:
  - name: sums
    plugin: faulty
    axes: {size: [1, 2]}
    sweep_expect:
      - slope(host_tim, size) ~ 2 ± 0.3
      - monotonic(host_time, sise, increasing)
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "series.yaml:10:15: error: unknown metric 'host_tim'; did you mean 'host_time'? (`expr metrics` lists every metric)\n"
                   "          - slope(host_tim, size) ~ 2 ± 0.3\n" + std::string(4 + 14, ' ') + "^~~~~~~~\n"));
  CHECK(has(o.err, "series.yaml:11:30: error: 'sise' is not an axis of sums; did you mean 'size'?"));
}
