// expr's own log (util/log.hpp): expr.log in every run directory with the run's story and the
// workers' lines, plugins' ctx.log among them; the terminal shows what --log-level or EXPR_LOG asks
// for, warnings and up by default, with the report unchanged.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness.hpp"

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using e2e::has;

// The garbled plugin logs "\xff\xfe ok" with ctx.info in setup; the bytes that are not UTF-8
// reach the parent as U+FFFD.
fs::path series(const std::string& name) {
  const auto dir = e2e::scratch(name);
  e2e::write(dir, "series.yaml", R"(series: logged
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}
experiments:
  - name: talker
    plugin: garbled
)");
  return dir;
}

}  // namespace

TEST_CASE("a run directory keeps expr.log: the run, each experiment, and the plugin's ctx.log lines from its worker") {
  const auto dir = series("log_file");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  const auto log = slurp(dir / "run" / "expr.log");
  INFO(log);
  const auto id = e2e::read_json(dir / "run" / "results.json").at("run").at("id").get<std::string>();
  CHECK(has(log, " info run " + id + ": series logged from series.yaml, 1 experiments"));
  CHECK(has(log, " info talker: started on cpu"));
  CHECK(has(log, " debug talker: setup"));  // phases, from debug up
  CHECK(has(log, " info talker: \xef\xbf\xbd\xef\xbf\xbd ok"));  // the plugin's line, through its worker
  CHECK(has(log, " info talker: ok"));
  CHECK(has(log, " info run " + id + " ended: 1 confirmed"));
  // Lines carry their UTC time: 2026-11-30T10:15:02.123Z
  CHECK(log.size() > 24);
  CHECK(log[10] == 'T');
  CHECK(log[23] == 'Z');
  // The worker's own log has the plugin's line too.
  CHECK(has(slurp(dir / "run" / "experiments" / "talker" / "worker.log"), " info \xff\xfe ok"));
  // By default the terminal shows warnings and up: none here, and the report as ever.
  CHECK_FALSE(has(o.err, "info:"));
  CHECK(has(o.out, "Guess vs trace: 1 confirmed, 0 contradicted, 0 not evaluable"));
}

TEST_CASE("--log-level and EXPR_LOG choose what the terminal shows") {
  const auto dir = series("log_levels");
  auto o = e2e::expr(dir, "run series.yaml --out run --force --log-level info");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.err, "info: talker: \xef\xbf\xbd\xef\xbf\xbd ok"));
  CHECK_FALSE(has(o.err, "debug:"));

  o = e2e::expr(dir, "run series.yaml --out run --force", "EXPR_LOG=debug");
  CHECK(o.exit_code == 0);
  CHECK(has(o.err, "debug: talker: setup"));

  o = e2e::expr(dir, "--log-level error run series.yaml --out run --force", "EXPR_LOG=debug");  // the option wins
  CHECK(o.exit_code == 0);
  CHECK_FALSE(has(o.err, "debug:"));
  CHECK_FALSE(has(o.err, "info:"));

  o = e2e::expr(dir, "run series.yaml --out run --force --log-level chatty");
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "--log-level"));
}

TEST_CASE("a replay into a directory keeps its own expr.log") {
  const auto dir = series("log_replay");
  REQUIRE(e2e::expr(dir, "run series.yaml --out run").exit_code == 0);
  const auto o = e2e::expr(dir, "replay run --out again");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  const auto log = slurp(dir / "again" / "expr.log");
  CHECK(has(log, " info replaying run"));
  CHECK(has(log, " info talker: ok"));
}
