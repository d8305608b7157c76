// Bad input gets one clear message with its place (file:line:column) and a non-zero exit, before
// anything runs.
#include <doctest/doctest.h>
#include <expr/plugin.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "harness.hpp"

namespace {

// Validates a series file holding `text`; returns what expr printed.
e2e::Outcome validate(const std::string& name, const std::string& text) {
  const auto dir = e2e::scratch("bad_" + name);
  e2e::write(dir, "series.yaml", text);
  return e2e::expr(dir, "validate series.yaml");
}

using e2e::has;

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
  CHECK(has(o, "series.yaml:5:14: error: plugin faulty has no parameter 'sise'; did you mean 'size'? (parameters: fault, size, print_mib)"));
  CHECK(has(o, "series.yaml:5:31: error: parameter 'fault' is one of none, throw_in_setup, throw_in_run, segfault, abort, hang, spawn_and_hang, wrong_result or correctness_in_setup, not 'segfalt'; did you mean 'segfault'?"));
  CHECK(has(o, "series.yaml:8:20: error: parameter 'size' is a whole number, not '1.5'"));
}

TEST_CASE("a guess that does not parse shows where, with a caret") {
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
  CHECK(has(o, "series.yaml:6:23: error: '=' is not a comparison; write '=='\n          - ranges(\"sum\") = 1\n" + std::string(4 + 22, ' ') + "^\n"));
  CHECK(has(o, "series.yaml:7:21: error: the observed value is a duration but the guess is a plain number; write it with a unit: ns, us, ms or s"));
  CHECK(has(o, "series.yaml:8:21: error: `~` needs a tolerance"));
}

TEST_CASE("an error inside a folded or literal block guess is shown on its own line, under its character") {
  const auto o = validate("expect_blocks", R"(series: x
experiments:
  - name: sums
    plugin: faulty
    expect:
      - check: >
          ranges("sum")
          = 1
        why: folded, so the line break before '=' is a space in the guess
      - check: |
          ranges("sum") ==
            1 1
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:8:11: error: '=' is not a comparison; write '=='\n              = 1\n" + std::string(4 + 10, ' ') + "^\n"));
  CHECK(has(o, "series.yaml:12:15: error: unexpected '1' after the guess\n                1 1\n" + std::string(4 + 14, ' ') + "^\n"));
}

TEST_CASE("a guess naming an unknown metric, figure or experiment gets a suggestion") {
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

TEST_CASE("values and names are marked along their whole length") {
  auto o = validate("value_range", R"(series: x
experiments:
  - name: sums
    plugin: faulty
    params: {size: big}
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:20: error: parameter 'size' is a whole number, not 'big'\n        params: {size: big}\n" + std::string(4 + 19, ' ') + "^~~\n"));
  o = validate("name_range", R"(series: x
experiments:
  - name: sums
    plugin: faulty
    expect: [kernel.ocupancy > 10%]
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:21: error: kernel has no figure 'ocupancy'; did you mean 'occupancy'?\n        expect: [kernel.ocupancy > 10%]\n" +
                   std::string(4 + 20, ' ') + "^~~~~~~~\n"));
}

TEST_CASE("hostile guesses are refused with the place and a caret, not a crash") {
  // Each of the first five used to overflow the stack of `expr validate` (SIGSEGV; issue 14 saw it
  // with a fifth of these sizes in a debug build).
  std::string many_terms = "1";
  for (int i = 0; i < 100000; ++i) many_terms += " + 1";
  const std::vector<std::string> guesses{
      std::string(100000, '(') + "1" + std::string(100000, ')') + " == 1",
      std::string(100000, '-') + "1 == 1",
      many_terms + " == 1",
      std::string(100, '(') + "1" + std::string(100, ')') + " == 1",
      "ranges(\"" + std::string(100000, 'a') + "\") == 1",
      "fact(\"x\") ~ \"(\"",  // validated, then failed the run when judged
  };
  std::string text = "series: x\nexperiments:\n  - name: sums\n    plugin: faulty\n    expect:\n";
  for (const auto& g : guesses) text += "      - '" + g + "'\n";
  const auto o = validate("hostile", text);
  INFO(o.err.substr(0, 4000));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:6:1010: error: this guess is 200006 bytes long; the limit is 1000\n"));
  CHECK(has(o, "series.yaml:7:1010: error: this guess is 100006 bytes long; the limit is 1000\n"));
  CHECK(has(o, "series.yaml:8:1010: error: this guess is 400006 bytes long; the limit is 1000\n"));
  CHECK(has(o, "series.yaml:9:74: error: the guess nests more than 64 levels deep (each parenthesis, sign and operator is one)\n"));
  CHECK(has(o, "series.yaml:10:1010: error: this guess is 100015 bytes long; the limit is 1000\n"));
  CHECK(has(o, "series.yaml:11:22: error: '(' is not a valid regex: missing ): (\n"
               "          - 'fact(\"x\") ~ \"(\"'\n" + std::string(4 + 21, ' ') + "^~~\n"));
  CHECK(has(o, "6 problems in series.yaml; nothing ran"));
}

TEST_CASE("a long, deeply nested regex validates: RE2 needs no bound of its own") {
  // std::regex overflowed the stack on such a regex; RE2 never recurses (util/regex.hpp).
  const auto o = validate("long_regex", "series: x\nexperiments:\n  - name: sums\n    plugin: faulty\n    expect:\n      - ranges(\"" +
                                            std::string(200, '(') + std::string(300, 'a') + std::string(200, ')') + "\") == 1\n");
  INFO(o.all());
  CHECK(o.exit_code == 0);
}

TEST_CASE("replay --series shows a problem in a guess with its caret, as validate does") {
  const auto dir = e2e::scratch("replay_bad_series");
  e2e::write(dir, "series.yaml", R"(series: probe
experiments:
  - name: probe
    plugin: cuda_probe
    expect:
      - check: >
          kernels
          = 5
)");
  const auto o = e2e::expr(dir, "replay " EXPR_SOURCE_DIR "/tests/data/cuda-probe-h200 --series series.yaml");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:8:11: error: '=' is not a comparison; write '=='\n              = 5\n" + std::string(4 + 10, ' ') + "^\n"));
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
  CHECK(has(o, "abi_mismatch.so: built against expr plugin ABI version 999, but this expr speaks version " +
                   std::to_string(expr::plugin_abi_version)));
}

#ifdef EXPR_E2E_LIBTORCH
TEST_CASE("a plugin built against another LibTorch than expr's is refused, with both versions named") {
  const auto o = validate("libtorch", "series: x\nexperiments:\n  - {name: a, plugin: libtorch_mismatch}\n");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "libtorch_mismatch.so: built differently from this expr (LibTorch: the plugin 0.1.0, this expr " EXPR_E2E_LIBTORCH ")"));
}
#endif

TEST_CASE("two plugins of the same name are an error naming both files, and one file reached twice is one plugin") {
  const auto dir = e2e::scratch("bad_duplicate");
  std::filesystem::create_directories(dir / "plugins");
  std::filesystem::copy_file(EXPR_TEST_PLUGIN_DIR "/faulty.so", dir / "plugins" / "faulty.so");
  e2e::write(dir, "series.yaml", "series: x\nplugin_path: [plugins]\nexperiments:\n  - {name: a, plugin: faulty}\n");
  auto o = e2e::expr(dir, "validate series.yaml");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "error: two plugins are named 'faulty': " + (dir / "plugins" / "faulty.so").string() +
                   " (the series' plugin_path) and " EXPR_TEST_PLUGIN_DIR "/faulty.so ($EXPR_PLUGIN_PATH); remove or rename one"));
  o = e2e::expr(dir, "list --plugin-path plugins");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "error: two plugins are named 'faulty': plugins/faulty.so (--plugin-path) and " EXPR_TEST_PLUGIN_DIR "/faulty.so"));
  // The test plugins' folder named twice is still one faulty.so.
  o = e2e::expr(dir, "list --plugin-path " EXPR_TEST_PLUGIN_DIR);
  CHECK_FALSE(has(o, "two plugins are named"));
  CHECK(o.out.find("faulty — sums a vector; or fails on purpose\n  file: " EXPR_TEST_PLUGIN_DIR "/faulty.so (--plugin-path)") !=
        std::string::npos);
}

TEST_CASE("run refuses bad input before running anything" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("bad_run");
  e2e::write(dir, "series.yaml", "series: x\nexperiments:\n  - name: sums\n    plugin: faulty\n    expect: [kernals == 1]\n");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "1 problem in series.yaml; nothing ran"));
  CHECK_FALSE(std::filesystem::exists(dir / "run"));
}

TEST_CASE("an output directory that cannot be written is an error before anything runs" * e2e::runs_experiments) {
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
