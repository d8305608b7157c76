// The command line as a newcomer meets it: --version, "did you mean" for a mistyped command or
// option, examples in --help, --plugin-path on every command that finds plugins, and the end of a
// run's output saying what to open and what to run next.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "harness.hpp"

namespace fs = std::filesystem;
using e2e::has;

namespace {

// One quick CPU experiment of the `faulty` test plugin, which takes no time to run.
const char* quick_series = R"(series: quick
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 5, min_time: 0.01, max_time: 0.1}
experiments:
  - name: fine
    plugin: faulty
    expect: [ranges("^sum$") >= 1]
)";

}  // namespace

TEST_CASE("expr --version names the version and the source revision") {
  const auto dir = e2e::scratch("cli_version");
  const auto o = e2e::expr(dir, "--version");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(o.out.starts_with("expr 0."));
  CHECK(has(o.out, "(revision "));
}

TEST_CASE("a mistyped command or option gets a did-you-mean and exit 2") {
  const auto dir = e2e::scratch("cli_did_you_mean");
  e2e::write(dir, "quick.yaml", quick_series);

  const auto command = e2e::expr(dir, "rnu quick.yaml");
  INFO(command.all());
  CHECK(command.exit_code == 2);
  CHECK(has(command, "expr: 'rnu' is not a command; did you mean 'run'?"));

  const auto option = e2e::expr(dir, "run quick.yaml --output elsewhere");
  INFO(option.all());
  CHECK(option.exit_code == 2);
  CHECK(has(option, "expr run: unknown option --output; did you mean '--out'?"));
  CHECK(!fs::exists(dir / "elsewhere"));

  // An option's value is not taken for a command: `--log-level debug` before the command.
  const auto value = e2e::expr(dir, "--log-level debug rnu");
  INFO(value.all());
  CHECK(has(value, "'rnu' is not a command; did you mean 'run'?"));

  const auto nested = e2e::expr(dir, "new plugn x");
  INFO(nested.all());
  CHECK(nested.exit_code == 2);
  CHECK(has(nested, "expr new: 'plugn' is not a command; did you mean 'plugin'?"));
}

TEST_CASE("every command's --help ends with examples") {
  const auto dir = e2e::scratch("cli_help");
  for (const auto* command : {"run", "validate", "list", "show", "replay", "merge", "slurm", "metrics", "compare", "history", "calibrate",
                              "new plugin", "new series"}) {
    const auto o = e2e::expr(dir, std::string(command) + " --help");
    INFO(command, o.all());
    CHECK(o.exit_code == 0);
    CHECK((has(o.out, "Examples:\n") || has(o.out, "Example:\n")));
  }
}

TEST_CASE("--plugin-path finds plugins for run and validate as it does for list" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("cli_plugin_path");
  e2e::write(dir, "quick.yaml", quick_series);
  // No test plugins on $EXPR_PLUGIN_PATH: only --plugin-path can find `faulty`.
  const auto missing = e2e::expr(dir, "validate quick.yaml", "EXPR_PLUGIN_PATH=");
  INFO(missing.all());
  CHECK(missing.exit_code == 2);
  const auto validated = e2e::expr(dir, "validate quick.yaml --plugin-path '" EXPR_TEST_PLUGIN_DIR "'", "EXPR_PLUGIN_PATH=");
  INFO(validated.all());
  CHECK(validated.exit_code == 0);
  const auto ran = e2e::expr(dir, "run quick.yaml --out run --no-history --plugin-path '" EXPR_TEST_PLUGIN_DIR "'", "EXPR_PLUGIN_PATH=");
  INFO(ran.all());
  CHECK(ran.exit_code == 0);
  const auto listed = e2e::expr(dir, "list --plugin-path '" EXPR_TEST_PLUGIN_DIR "'", "EXPR_PLUGIN_PATH=");
  INFO(listed.all());
  CHECK(has(listed.out, "faulty"));
}

TEST_CASE("a run and `expr show` end with the report to open and the next commands" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("cli_ending");
  e2e::write(dir, "quick.yaml", quick_series);
  const auto o = e2e::expr(dir, "run quick.yaml --out run --history history.sqlite");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  // The last lines: what to open, then what to run.
  const auto open = o.out.rfind("open:");
  REQUIRE(open != std::string::npos);
  const auto ending = o.out.substr(open);
  CHECK(has(ending, "run/report.html"));
  CHECK(has(ending, "run/summary.md"));
  CHECK(has(ending, "next:\n"));
  CHECK(has(ending, " show run\n"));
  CHECK(has(ending, " run quick.yaml --baseline @last --history history.sqlite\n"));
  CHECK(has(ending, " calibrate quick.yaml --runs 5 --history history.sqlite\n"));
  CHECK(has(o.out, "history: history.sqlite (run "));

  const auto shown = e2e::expr(dir, "show run");
  INFO(shown.all());
  CHECK(shown.exit_code == 0);
  const auto shown_open = shown.out.rfind("open:");
  REQUIRE(shown_open != std::string::npos);
  CHECK(has(shown.out.substr(shown_open), "run/report.html"));
  CHECK(has(shown.out.substr(shown_open), " run quick.yaml --baseline run\n"));
}

// The table's width over 120 columns is tested on a run with every column (unit/summary_test.cpp).
TEST_CASE("the summary table of a CPU run drops the device's columns and names the rest as guesses do" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("cli_table");
  e2e::write(dir, "quick.yaml", quick_series);
  const auto o = e2e::expr(dir, "run quick.yaml --out run --no-history");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  std::istringstream lines(o.out);
  std::string header;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("  experiment ")) header = line;
  }
  INFO(header);
  // A CPU run has no device figures: no kernels, copies or kernel columns; the timings keep the
  // names guesses use.
  CHECK(has(header, "host_time"));
  CHECK(!has(header, "gpu_time"));
  CHECK(!has(header, "kernel"));
  CHECK(!has(header, "copies"));
}
