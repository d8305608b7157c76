// Bad input gets one clear message with its place (file:line:column) and a non-zero exit, before
// anything runs.
#include <doctest/doctest.h>

#include <filesystem>

#include "harness.hpp"

namespace {

// Validates a series file holding `text`; returns what expr printed.
e2e::Outcome validate(const std::string& name, const std::string& text) {
  const auto dir = e2e::scratch("bad_" + name);
  e2e::write(dir, "series.yaml", text);
  return e2e::expr(dir, "validate series.yaml");
}

bool has(const e2e::Outcome& o, const std::string& text) { return o.err.find(text) != std::string::npos; }

}  // namespace

TEST_CASE("a valid series validates") {
  const auto o = validate("valid", R"(series: ok
experiments:
  - name: sums
    plugin: faulty
    expect: [ranges("sum") == 1]
)");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(o.out.find("series ok is valid: 1 experiments, 2 guesses") != std::string::npos);
}

TEST_CASE("malformed YAML names the line and column") {
  const auto o = validate("yaml", "series: x\nexperiments:\n  - name: [unclosed\n");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:4:1: error: malformed YAML"));
}

TEST_CASE("an unknown key is an error with a suggestion") {
  const auto o = validate("key", R"(series: x
experiments:
  - name: sums
    plugn: faulty
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:4:5: error: unknown key 'plugn' in an experiment; did you mean 'plugin'?"));
  CHECK(has(o, "series.yaml:3:5: error: an experiment needs 'plugin: <plugin name>'"));
}

TEST_CASE("values of the wrong type are errors at the value") {
  const auto o = validate("types", R"(series: x
defaults:
  iterations: {warmup: lots}
experiments:
  - name: sums
    plugin: faulty
    device: gpu
    params: {size: big}
    expect: {kernels: 5}
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:3:24: error: warmup must be a whole number between 0 and 1000000"));
  CHECK(has(o, "series.yaml:7:13: error: device must be auto, cpu or cuda, not 'gpu'"));
  CHECK(has(o, "series.yaml:9:13: error: expect must be a list of checks"));
}

TEST_CASE("an unknown plugin names the directories searched and the closest plugin") {
  const auto o = validate("plugin", R"(series: x
experiments:
  - name: sums
    plugin: faulti
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:4:13: error: no plugin 'faulti'; did you mean 'faulty'? (searched "));
}

TEST_CASE("unknown plugin parameters and ill-typed values are errors with suggestions") {
  const auto o = validate("params", R"(series: x
experiments:
  - name: sums
    plugin: faulty
    params: {sise: 10, fault: segfalt}
  - name: more
    plugin: faulty
    params: {size: 1.5}
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:14: error: plugin faulty has no parameter 'sise'; did you mean 'size'? (parameters: fault, size)"));
  CHECK(has(o, "series.yaml:5:31: error: parameter 'fault' is one of none, throw_in_setup, throw_in_run, segfault, abort, hang, spawn_and_hang, wrong_result or correctness_in_setup, not 'segfalt'; did you mean 'segfault'?"));
  CHECK(has(o, "series.yaml:8:20: error: parameter 'size' is a whole number, not '1.5'"));
}

TEST_CASE("an expectation that does not parse shows where, with a caret") {
  const auto o = validate("expect_syntax", R"(series: x
experiments:
  - name: sums
    plugin: faulty
    expect:
      - ranges("sum") = 1
      - "gpu_time < 5"
      - kernels ~ 20
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:6:23: error: '=' is not a comparison; write '=='\n    ranges(\"sum\") = 1\n                  ^"));
  CHECK(has(o, "series.yaml:7:21: error: the observed value is a duration but the guess is a plain number; write it with a unit: ns, us, ms or s"));
  CHECK(has(o, "series.yaml:8:21: error: `~` needs a tolerance"));
}

TEST_CASE("an expectation naming an unknown metric, figure or experiment gets a suggestion") {
  const auto o = validate("expect_names", R"(series: x
experiments:
  - name: sums
    plugin: faulty
    expect:
      - kernals == 5
      - kernel("x").ocupancy > 10%
      - host_time < sumz.host_time
      - copies(kind=DtD) == 0
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:6:9: error: unknown metric 'kernals'; did you mean 'kernels'?"));
  CHECK(has(o, "series.yaml:7:21: error: kernel has no figure 'ocupancy'; did you mean 'occupancy'?"));
  CHECK(has(o, "series.yaml:8:21: error: 'sumz' is neither a metric nor an experiment of this series; did you mean 'sums'?"));
  CHECK(has(o, "series.yaml:9:21: error: unknown copy kind 'DtD'; did you mean 'DtoD'?"));
}

TEST_CASE("plugin files that cannot be plugins are refused with the reason") {
  const auto o = validate("libraries", R"(series: x
experiments:
  - name: text
    plugin: not_a_library
  - name: plain
    plugin: no_entry
  - name: old
    plugin: abi_mismatch
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "not_a_library.so: not a loadable shared library: "));
  CHECK(has(o, "no_entry.so: not an expr plugin: it exports no expr_plugin_abi_version() / expr_plugin_create()"));
  CHECK(has(o, "abi_mismatch.so: built against expr plugin ABI version 999, but this expr speaks version 2"));
}

TEST_CASE("run refuses bad input before running anything") {
  const auto dir = e2e::scratch("bad_run");
  e2e::write(dir, "series.yaml", "series: x\nexperiments:\n  - name: sums\n    plugin: faulty\n    expect: [kernals == 1]\n");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "1 problem in series.yaml; nothing ran"));
  CHECK_FALSE(std::filesystem::exists(dir / "run"));
}

TEST_CASE("an output directory that cannot be written is an error before anything runs") {
  const auto dir = e2e::scratch("unwritable");
  e2e::write(dir, "series.yaml", "series: x\nexperiments:\n  - name: sums\n    plugin: faulty\n");
  e2e::write(dir, "blocker", "a file where the run directory should go");
  const auto o = e2e::expr(dir, "run series.yaml --out blocker/run");
  INFO(o.all());
  CHECK(o.exit_code == 4);
  CHECK(has(o, "error: cannot write the run directory blocker/run"));
}

TEST_CASE("a missing series file and an unknown command are usage errors") {
  const auto dir = e2e::scratch("usage");
  auto o = e2e::expr(dir, "validate nowhere.yaml");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "nowhere.yaml: error: cannot open the series file"));
  o = e2e::expr(dir, "frobnicate");
  CHECK(o.exit_code == 2);
}
