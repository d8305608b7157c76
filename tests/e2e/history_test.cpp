// The history, comparisons and gates end to end: the real expr binary records runs of the waiter
// test plugin in a real SQLite file, and `expr history`, `expr compare` and the gate read them back.
// A slowdown is injected by making the plugin wait 20% longer; a structural change by its
// `extra_copy`, which copies a buffer inside a range of its own and leaves the timing as it was.
// `expr across` sets recorded runs of tests/data side by side.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "harness.hpp"

namespace fs = std::filesystem;

namespace {

using e2e::has;

// One timing round, one worker process, per run: how these tests' runs measured before rounds. A
// comparison of such runs knows how far the figure moves between runs only from other runs: the
// history's or a calibration's.
std::string waiting(double delay_us, bool extra_copy = false) {
  return "series: waiting\n"
         "defaults:\n"
         "  device: cpu\n"
         "  iterations: {warmup: 2, traced: 2, min_samples: 100, min_time: 0.1, max_time: 0.5, rounds: 1}\n"
         "experiments:\n"
         "  - name: w\n"
         "    plugin: waiter\n"
         "    params: {delay: " + std::to_string(delay_us) + ", extra_copy: " + (extra_copy ? "true" : "false") + "}\n";
}

// Runs `series` as run directory `name` in `dir`, recorded in dir/history.sqlite.
void record(const fs::path& dir, const std::string& name, const std::string& series) {
  e2e::write(dir, name + ".yaml", series);
  const auto o = e2e::expr(dir, "run " + name + ".yaml --out " + name + " --history history.sqlite");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
}

// Calibrates series `waiting` (delay 100 µs) in dir/history.sqlite with five unchanged runs, so that
// runs recorded after carry how far host_time moves between processes: without that (or rounds, or
// a history of such runs) no comparison may call a change slower or faster.
void calibrate(const fs::path& dir) {
  e2e::write(dir, "calibration.yaml", waiting(100));
  const auto o = e2e::expr(dir, "calibrate calibration.yaml --runs 5 --history history.sqlite --out calibration");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
}

// The row of a comparison's timing table about experiment w's `metric`.
std::string row(const std::string& output, const std::string& metric) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("  w ") && has(line, " " + metric + " ")) return line;
  return "";
}

}  // namespace

TEST_CASE("six recorded runs make a history: listed, one metric over time, comparable without their run directories" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_six");
  const auto names = {"first", "second", "third", "fourth", "fifth", "sixth"};
  for (const auto* name : names) record(dir, name, waiting(100));

  auto o = e2e::expr(dir, "history --history history.sqlite");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "6 runs shown"));
  CHECK(has(o.out, "waiting"));

  o = e2e::expr(dir, "history --history history.sqlite --experiment w --metric host_time");
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "w host_time over 6 runs of waiting"));

  // The raw samples live in the history: the runs compare with their directories gone, and the
  // four runs before them tell how far the figure moves between runs (2.25 df: enough for "same"
  // to hold through the moves of a loaded machine).
  for (const auto* name : names) fs::remove_all(dir / name);
  o = e2e::expr(dir, "compare @last~1 @last --history history.sqlite");
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "same"));
  CHECK(has(row(o.out, "host_time"), "2.25 df, between runs: history)"));
  CHECK(has(o.out, "Holm's correction over 1 test"));
}

TEST_CASE("compare finds an injected 20% slowdown and calls an unchanged build the same" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_slowdown");
  calibrate(dir);
  record(dir, "base", waiting(100));
  record(dir, "again", waiting(100));
  record(dir, "slow", waiting(120));

  auto o = e2e::expr(dir, "compare base again");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "same"));
  CHECK(has(o.out, "no regression, the gate passes"));

  o = e2e::expr(dir, "compare base slow --markdown slow.md --html slow.html");
  CHECK(o.exit_code == 5);
  const auto page = e2e::read_text(dir / "slow.html");
  CHECK(has(page, "<p class=\"gate-fails\">REGRESSION, the gate fails: 1 slower"));
  CHECK(has(page, "<td>w</td><td>host_time</td>"));
  CHECK(has(row(o.out, "host_time"), "slower"));
  const auto md = e2e::read_text(dir / "slow.md");
  // One round a side, and the change with its interval: about +20%, give or take the plugin's own
  // overhead per call, which differs between runs (under a microsecond on a quiet machine; 1 to
  // 3.4 µs between runs of the sanitizer build under load, +22% seen).
  CHECK(std::regex_search(md, std::regex(R"(\| w \| host_time \| [^|]+ \| [^|]+ \| 1 / 1 \| \+(1[5-9]|2[0-4])(\.\d+)?% \|)")));
  CHECK(has(md, "REGRESSION, the gate fails"));
  // And the command that measures the slow point again.
  CHECK(has(md, "expr run slow.yaml --filter '^w$'"));

  // Over time, the night it moved is a step.
  o = e2e::expr(dir, "history --history history.sqlite --experiment w --metric host_time");
  CHECK(o.exit_code == 0);
  CHECK(std::regex_search(o.out, std::regex(R"(▲ \+(1[5-9]|2[0-4])\.\d\d% \(slower\))")));
  CHECK(!has(o.out, "▼"));
}

TEST_CASE("timing rounds measure the noise between processes, the history the noise between runs: with both a slowdown is found without calibration" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_rounds");
  const auto three_rounds = [](double delay) { return std::regex_replace(waiting(delay), std::regex("rounds: 1"), "rounds: 3"); };
  for (const auto* name : {"night1", "night2", "night3", "night4", "base"}) record(dir, name, three_rounds(100));
  record(dir, "slow", three_rounds(200));
  const auto results = nlohmann::json::parse(e2e::read_text(dir / "base" / "results.json"));
  CHECK(results.at("experiments").at(0).at("timing").at("host").at("rounds_ns").size() == 3);
  CHECK(fs::exists(dir / "base" / "experiments" / "w" / "worker.round3.log"));
  auto o = e2e::expr(dir, "compare base slow --history history.sqlite");
  INFO(o.all());
  CHECK(o.exit_code == 5);
  CHECK(has(row(o.out, "host_time"), "slower"));
  CHECK(has(row(o.out, "host_time"), "3 / 3"));
  CHECK(std::regex_search(row(o.out, "host_time"), std::regex(R"(\([0-9.]+ df, between (runs: history|processes: rounds, history)\))")));

  // The rounds alone cannot tell a slower build from a machine slower for the whole run.
  o = e2e::expr(dir, "compare base slow");
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "inconclusive"));
  CHECK(has(o.out, "w host_time: inconclusive: noise between runs unknown: fewer than two other runs of it on this machine in the history, and no calibration (expr calibrate measures it)"));
  CHECK(has(o.out, "1 of 1 timing could not detect a change of their threshold's size"));
}

TEST_CASE("a baseline that stands out alone from the run before it does not fail the gate of a candidate back where that run was" * e2e::runs_experiments) {
  // A machine that falls into a faster state for one whole run: that run is the baseline, and the
  // next one, back in the usual state, would be called slower than it.
  const auto dir = e2e::scratch("history_baseline_alone");
  const auto three_rounds = [](double delay) { return std::regex_replace(waiting(delay), std::regex("rounds: 1"), "rounds: 3"); };
  for (const auto* name : {"night1", "night2", "night3", "night4"}) record(dir, name, three_rounds(200));
  record(dir, "fast", three_rounds(100));
  record(dir, "back", three_rounds(200));
  const auto night4 = nlohmann::json::parse(e2e::read_text(dir / "night4" / "results.json")).at("run").at("id").get<std::string>();
  const auto o = e2e::expr(dir, "compare fast back --history history.sqlite");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "inconclusive"));
  CHECK(has(o.out, "w host_time: inconclusive: against the run just before the baseline on this machine, the baseline moved beyond the noise floor and the candidate did not"));
  CHECK(has(o.out, "the run just before the baseline on this machine: " + night4));
}

TEST_CASE("the series' gates set the thresholds, and a mistake in them is reported at its place" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_gates");
  e2e::write(dir, "typo.yaml", waiting(100) + "gates:\n  host_tim: 5%\n");
  auto o = e2e::expr(dir, "validate typo.yaml");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "typo.yaml:10:3: error: unknown key 'host_tim' in gates; did you mean 'host_time'?"));

  calibrate(dir);
  record(dir, "base", waiting(100));
  record(dir, "slow", waiting(120) + "gates:\n  host_time: 50%\n");
  o = e2e::expr(dir, "compare base slow");
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "host_time 50%"));
  CHECK(has(row(o.out, "host_time"), "same"));
}

TEST_CASE("the gate fails on a slowdown and passes an improvement" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_gate");
  calibrate(dir);
  record(dir, "fast", waiting(100));
  record(dir, "slow", waiting(120));
  auto o = e2e::expr(dir, "compare fast slow");
  INFO(o.all());
  CHECK(o.exit_code == 5);
  o = e2e::expr(dir, "compare slow fast");
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "faster"));
  // A threshold above the change turns it into no regression, without hiding the figures.
  o = e2e::expr(dir, "compare fast slow --threshold host_time=50%");
  CHECK(o.exit_code == 0);
  CHECK(!has(row(o.out, "host_time"), "slower"));
}

TEST_CASE("an added copy is a structural regression even when the timing is not slower" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_structure");
  record(dir, "base", waiting(100));
  record(dir, "copying", waiting(100, true));
  auto o = e2e::expr(dir, "compare base copying");
  INFO(o.all());
  CHECK(o.exit_code == 5);
  CHECK(!has(row(o.out, "host_time"), "slower"));
  CHECK(std::regex_search(o.out, std::regex(R"(w +range copy +0 +1 .*regression)")));
  CHECK(has(o.out, "0 slower"));
  CHECK(has(o.out, "1 structural regression"));
  // The copy going away is an improvement, and passes.
  o = e2e::expr(dir, "compare copying base");
  CHECK(o.exit_code == 0);
  CHECK(std::regex_search(o.out, std::regex(R"(w +range copy +1 +0 .*improvement)")));
  // With structural gates off the change is still reported, and the gate passes.
  o = e2e::expr(dir, "compare base copying --structure off");
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "range copy"));
}

TEST_CASE("a comparison across machines is refused with one message, unless asked for" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_machines");
  record(dir, "base", waiting(100));
  fs::copy(dir / "base", dir / "elsewhere", fs::copy_options::recursive);
  // The same measurements, as if made by another run on another CPU.
  auto results = e2e::read_json(dir / "elsewhere" / "results.json");
  results["environment"]["cpu"] = "Another CPU 9000";
  results["run"]["id"] = "elsewhere";
  std::ofstream(dir / "elsewhere" / "results.json") << results.dump(2);

  auto o = e2e::expr(dir, "compare base elsewhere");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "error: refusing to compare runs from different machines"));
  CHECK(has(o.err, "cpu: "));
  CHECK(has(o.err, "Another CPU 9000 (candidate)"));
  CHECK(has(o.err, "--across-environments"));
  CHECK(o.out.empty());

  o = e2e::expr(dir, "compare base elsewhere --across-environments");
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "DIFFERENT MACHINE: cpu"));
}

TEST_CASE("history references name runs of the series, and a wrong one says what was looked for" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_references");
  record(dir, "only", waiting(100));
  auto o = e2e::expr(dir, "compare @last only --history history.sqlite");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "@last and only are the same run"));
  o = e2e::expr(dir, "compare @last~1 only --history history.sqlite");
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "no run of series 'waiting' to stand for @last~1"));
  o = e2e::expr(dir, "compare @nosuchrun only --history history.sqlite");
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "no run with id 'nosuchrun'"));
  o = e2e::expr(dir, "compare nowhere only");
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "nowhere: neither a run directory nor a history reference"));
  o = e2e::expr(dir, "compare only only --threshold gpu_tim=3%");
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "--threshold: gpu_tim=3%: write METRIC=FRACTION"));
  o = e2e::expr(dir, "compare only only --threshold gpu_time=3x");
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "--threshold: gpu_time=3x: '3x' is not a fraction such as 3% or 0.03"));
}

TEST_CASE("a file that is not this expr's history is refused, and nothing is run" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_refused");
  e2e::write(dir, "w.yaml", waiting(100));
  e2e::write(dir, "junk.sqlite", std::string(4096, 'x'));  // no SQLite header
  auto o = e2e::expr(dir, "run w.yaml --out w --history junk.sqlite");
  INFO(o.all());
  CHECK(o.exit_code == 4);
  CHECK(has(o.err, "junk.sqlite: not an expr history"));
  CHECK(!fs::exists(dir / "w" / "results.json"));

  // A history from a newer expr (a schema version this one does not know).
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir / "newer.sqlite").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  o = e2e::expr(dir, "run w.yaml --out w --history newer.sqlite");
  CHECK(o.exit_code == 4);
  CHECK(has(o.err, "the history has schema version 99, made by a newer expr"));
  // --no-history runs without one.
  o = e2e::expr(dir, "run w.yaml --out w --no-history");
  CHECK(o.exit_code == 0);
  CHECK(!has(o.out, "history:"));
}

namespace {

// The one value `query` reads from the SQLite file `file`.
double query_value(const fs::path& file, const std::string& query) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, query.c_str(), -1, &s, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  const double value = sqlite3_column_double(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return value;
}

// The schema version of a history file.
int schema_version(const fs::path& file) { return static_cast<int>(query_value(file, "PRAGMA user_version")); }

// The run-to-run noise the latest calibration in `file` stored for `metric` of its one point.
double calibrated_noise(const fs::path& file, const std::string& metric) {
  return query_value(file, "SELECT run_to_run FROM calibration_noise WHERE metric = '" + metric + "' ORDER BY calibration DESC LIMIT 1");
}

}  // namespace

TEST_CASE("a history written by schema version 1 is migrated when opened, and its runs still compare") {
  const auto dir = e2e::scratch("history_migration");
  // Three runs of `waiting` (delay 100, 100, then 120 µs) recorded by the first schema; see tests/data/README.md.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((dir / "old.sqlite").c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, e2e::read_text(EXPR_SOURCE_DIR "/tests/data/history-v1.sql").c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  REQUIRE(schema_version(dir / "old.sqlite") == 1);

  auto o = e2e::expr(dir, "history --history old.sqlite");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.err, "old.sqlite: migrated from schema version 1 to 4"));
  CHECK(has(o.out, "3 runs shown"));
  CHECK(schema_version(dir / "old.sqlite") == 4);

  // The migrated runs keep their raw samples and structure: they compare, the same structure the
  // same. Their timings are inconclusive: runs of one process each, no calibration, and a history of
  // one other run say nothing of how far the figure moves between runs (schema 1 called the slower
  // one slower on its samples alone, which unchanged runs also do on a machine that moves).
  o = e2e::expr(dir, "compare @last~2 @last~1 --history old.sqlite");
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "structure of the trace: no change"));
  CHECK(std::regex_search(row(o.out, "host_time"), std::regex(R"(1 / 1 +[+-]\d)")));
  CHECK(!has(o.err, "migrated"));  // once is enough
  o = e2e::expr(dir, "compare @last~1 @last --history old.sqlite");
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "inconclusive"));
  CHECK(has(o.out, "noise between runs unknown"));
}

TEST_CASE("calibrate measures the gate's false alarms over unchanged runs, and later runs carry each point's noise" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_calibrate");
  e2e::write(dir, "w.yaml", waiting(100));
  auto o = e2e::expr(dir, "calibrate w.yaml --runs 3 --history history.sqlite --out cal");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "3 runs of an unchanged build of series waiting"));
  CHECK(has(o.out, "3 pairs"));
  CHECK(std::regex_search(o.out, std::regex(R"(host_time: [0-3] of 3 \()")));
  CHECK(std::regex_search(o.out, std::regex(R"(w +host_time +3 +(< )?[0-9.]+% +2 +[0-3] of 3)")));  // 3 runs of one process: 2 df
  CHECK(has(o.out, "calibration 1 stored in history.sqlite"));
  CHECK(has(e2e::read_text(dir / "cal" / "calibration.md"), "# Calibration of waiting"));
  for (const auto* k : {"run-1", "run-2", "run-3"}) CHECK(fs::exists(dir / "cal" / k / "results.json"));

  o = e2e::expr(dir, "run w.yaml --out after --history history.sqlite");
  CHECK(o.exit_code == 0);
  CHECK(has(o.err, "timings carry the run-to-run noise of 1 calibrated point"));
  // The run carries the calibrated noise as stored, which may be 0: three runs whose medians agree
  // to the clock's resolution measured no scatter, and their 2 degrees of freedom say it is known.
  const auto host = e2e::experiment(e2e::read_json(dir / "after" / "results.json"), "w").at("timing").at("host");
  CHECK(host.at("run_to_run").get<double>() == doctest::Approx(calibrated_noise(dir / "history.sqlite", "host_time")));
  CHECK(host.at("run_to_run_df").get<double>() == 2);
  o = e2e::expr(dir, "compare cal/run-1 after");
  CHECK(has(row(o.out, "host_time"), "2 df, between runs: calibration)"));
}

TEST_CASE("expr run --baseline gates the run: 5 on a slowdown, 0 on an improvement, the verdict everywhere it is read" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_run_baseline");
  calibrate(dir);
  record(dir, "base", waiting(100));
  e2e::write(dir, "slow.yaml", waiting(120));
  auto o = e2e::expr(dir, "run slow.yaml --out slow --history history.sqlite --baseline @last");
  INFO(o.all());
  CHECK(o.exit_code == 5);
  CHECK(has(row(o.out, "host_time"), "slower"));
  // A slower timing fails the gate only when a second measurement shows it too.
  CHECK(has(o.err, "measuring 1 experiment once more (1 timing called slower, which a second measurement must show too): w"));
  CHECK(fs::exists(dir / "slow" / "remeasured" / "results.json"));
  CHECK(has(o.out, "w host_time: slower in both measurements (+"));
  CHECK(has(e2e::read_text(dir / "slow" / "summary.md"), "## Against the baseline"));
  const auto junit = e2e::read_text(dir / "slow" / "junit.xml");
  CHECK(has(junit, "<testsuite name=\"waiting.gate\" tests=\"1\" failures=\"1\""));
  CHECK(has(junit, "<failure message=\"slower than the baseline\">"));
  // expr show says the run was gated, what the gate said and what failed it.
  o = e2e::expr(dir, "show slow");
  CHECK(has(o.out, "REGRESSION, the gate fails: 1 slower"));
  CHECK(has(o.out, "slower than the baseline: w host_time: "));
  CHECK(has(o.out, "note: w host_time: slower in both measurements (+"));
  // So does report.html, first after its header.
  const auto page = e2e::read_text(dir / "slow" / "report.html");
  CHECK(has(page, "<a href=\"#gate\">Against the baseline</a>"));
  CHECK(has(page, "<p class=\"gate-fails\">REGRESSION, the gate fails: 1 slower"));
  CHECK(has(page, "<td>w</td><td>host_time</td>"));
  CHECK(page.find("id=\"gate\"") < page.find("id=\"guesses\""));
  const auto base_id = e2e::read_json(dir / "base" / "results.json").at("run").at("id").get<std::string>();
  o = e2e::expr(dir, "history --history history.sqlite");
  CHECK(has(o.out, "failed against " + base_id));
  // @last-good skips the run whose gate failed.
  o = e2e::expr(dir, "compare @last-good slow --history history.sqlite");
  CHECK(has(o.out, "baseline   " + base_id));

  // An improvement on the slow run, beyond where the run before it was, passes the gate. (Back to
  // 100 µs would only undo what the slow run alone shows: inconclusive, see the baseline that
  // stands out alone.)
  e2e::write(dir, "fast.yaml", waiting(80));
  o = e2e::expr(dir, "run fast.yaml --out fast --history history.sqlite --baseline @last");
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "faster"));
  CHECK(has(o.out, "no regression, the gate passes"));
  CHECK(has(e2e::read_text(dir / "fast" / "report.html"), "<p class=\"gate-passes\">no regression, the gate passes"));
  o = e2e::expr(dir, "show fast");
  CHECK(has(o.out, "gated against "));
  CHECK(has(o.out, "no regression, the gate passes: 0 slower, 1 faster"));
  o = e2e::expr(dir, "show base");
  CHECK(!has(o.out, "the gate "));
}

TEST_CASE("a timing slower only while the run's first worker measured it does not fail the gate: measured once more, it is back" *
          e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_slower_once");
  calibrate(dir);
  // The candidate's code is the baseline's; its first worker meets a machine 30% slower. A second
  // experiment, not measured again, keeps its first measurement.
  const auto workers = (dir / "workers.txt").string();
  const auto other = "  - name: other\n    plugin: waiter\n    params: {delay: 100}\n";
  record(dir, "base", waiting(100) + other);
  e2e::write(dir, "once.yaml", std::regex_replace(waiting(100), std::regex("extra_copy: false"),
                                                  "extra_copy: false, workers_file: \"" + workers + "\", slow_workers: 1, slow_delay: 130") +
                                   other);
  auto o = e2e::expr(dir, "run once.yaml --out once --history history.sqlite --baseline @last");
  INFO(o.all());
  INFO(e2e::read_text(workers));
  CHECK(has(o.err, "measuring 1 experiment once more (1 timing called slower, which a second measurement must show too): w"));
  CHECK(has(o.out, "w host_time: slower at first (+"));
  CHECK(has(o.out, "measured once more ("));
  CHECK(!has(row(o.out, "host_time"), "slower"));
  CHECK(!has(o.out, "failed: other"));
  CHECK(o.exit_code == 0);
  const auto first = e2e::experiment(e2e::read_json(dir / "once" / "results.json"), "w").at("timing").at("host").at("median_ns").get<double>();
  const auto again = e2e::experiment(e2e::read_json(dir / "once" / "remeasured" / "results.json"), "w").at("timing").at("host").at("median_ns").get<double>();
  CHECK(first > 1.2 * again);
  // The history, which the next night's gate reads, keeps the second measurement; the run
  // directory keeps both, and read back it is the run the gate compared.
  o = e2e::expr(dir, "compare @last~1 @last --history history.sqlite");
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "same"));
  o = e2e::expr(dir, "compare base once --history history.sqlite");
  CHECK(o.exit_code == 0);
  CHECK(has(row(o.out, "host_time"), "same"));
  // A run that replaces it without a gate keeps nothing of the gate's: no second measurement to
  // take figures from, no verdict for expr show.
  o = e2e::expr(dir, "run once.yaml --out once --force --no-history");
  CHECK(o.exit_code == 0);
  CHECK_FALSE(fs::exists(dir / "once" / "remeasured"));
  CHECK_FALSE(fs::exists(dir / "once" / "gate.txt"));
}

TEST_CASE("an inconclusive point is measured once more before the gate decides, and does not fail it" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_remeasure");
  // Three samples a run, one in each of three rounds: the calibration tells the noise between runs,
  // small beside the threshold, but three samples bound no interval of the median, so more samples
  // could settle it and the point is measured again (one with noise beyond its threshold, or
  // unknown, is not).
  calibrate(dir);
  const auto few = std::regex_replace(waiting(100), std::regex("iterations: \\{[^}]*\\}"),
                                      "iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0, max_time: 1, max_noise: 100%, rounds: 3}");
  record(dir, "base", few);
  e2e::write(dir, "again.yaml", few);
  auto o = e2e::expr(dir, "run again.yaml --out again --history history.sqlite --baseline @last");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.err, "measuring 1 experiment once more (1 inconclusive that more samples can settle): w"));
  CHECK(fs::exists(dir / "again" / "remeasured" / "results.json"));
  CHECK(has(row(o.out, "host_time"), "inconclusive"));
}

namespace {
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("a gate over nothing is refused: runs of different series, or with no experiment in common, exit 2" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_nothing_in_common");
  record(dir, "base", waiting(100));
  record(dir, "other", replaced(waiting(100), "series: waiting", "series: other"));
  record(dir, "renamed", replaced(waiting(100), "name: w\n", "name: w2\n"));

  auto o = e2e::expr(dir, "compare base other");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "refusing to compare runs of different series: the baseline is a run of waiting, the candidate of other"));
  CHECK(o.out.empty());

  o = e2e::expr(dir, "compare base renamed");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "the runs have no experiment in common (renamed?)"));
  CHECK(has(o.err, "the baseline's: w\n"));
  CHECK(has(o.err, "the candidate's: w2"));

  // run --baseline of another series' run directory is refused before anything runs.
  o = e2e::expr(dir, "run other.yaml --out gated --history history.sqlite --baseline base");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "--baseline base: refusing to compare runs of different series"));
  CHECK(!fs::exists(dir / "gated"));
}

TEST_CASE("an experiment of the baseline missing from the candidate fails the gate and is named in its verdict" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("history_missing");
  const auto two = waiting(100) + "  - name: v\n    plugin: waiter\n    params: {delay: 100}\n";
  record(dir, "base", two);
  record(dir, "one", waiting(100));

  auto o = e2e::expr(dir, "compare base one");
  INFO(o.all());
  CHECK(o.exit_code == 5);
  CHECK(has(o.out, "missing: v: in the baseline, not in the candidate"));
  CHECK(has(o.out, "REGRESSION, the gate fails"));
  CHECK(has(o.out, "; 1 missing from the candidate"));

  // The same in a run's gate: the verdict, and a failing case of the gate's suite in junit.xml.
  o = e2e::expr(dir, "run one.yaml --out gated --history history.sqlite --baseline base");
  INFO(o.all());
  CHECK(o.exit_code == 5);
  CHECK(has(o.out, "missing: v: in the baseline, not in the candidate"));
  CHECK(has(e2e::read_text(dir / "gated" / "junit.xml"), "<failure message=\"missing from the candidate\">"));
  CHECK(has(e2e::read_text(dir / "gated" / "summary.md"), "- missing: v: in the baseline, not in the candidate"));
}

TEST_CASE("across shows runs of one series side by side, the differing verdicts first, as text, JSON and a page") {
  const auto dir = e2e::scratch("across");
  const auto data = fs::path(EXPR_SOURCE_DIR) / "tests" / "data";
  auto o = e2e::expr(dir, "across " + (data / "series3-h200").string() + " " + (data / "series3-counters-h200").string() +
                              " --json across.json --html across.html");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "series3: 2 runs side by side, ratios to run 1"));
  CHECK(has(o.out, "NVIDIA H200 · driver 580.159.04 · CUDA 13.0 · LibTorch 2.11.0 · cuDNN 9.19.0"));
  CHECK(has(o.out, "What differs in their environments"));
  CHECK(has(o.out, "expr_revision"));
  CHECK(has(o.out, "Guesses: 7 of 84 differ between the runs"));
  // The first guess listed is one that differs.
  const auto guesses = o.out.find("Guesses:");
  REQUIRE(guesses != std::string::npos);
  CHECK(o.out.find("≠", guesses) < o.out.find("= ", o.out.find("experiment", guesses)));
  const auto view = e2e::read_json(dir / "across.json");
  CHECK(view.at("schema") == "expr.across/1");
  CHECK(view.at("guesses").at(0).at("differs") == true);
  CHECK(view.at("guesses").at(0).at("runs").at(0).is_null());
  const auto page = e2e::read_text(dir / "across.html");
  CHECK(has(page, "<h1>series3 across 2 runs</h1>"));
  CHECK(has(page, "<svg"));

  // Runs of two series, one run, a reference without a history: refused, each with one message.
  o = e2e::expr(dir, "across " + (data / "series3-h200").string() + " " + (data / "cuda-probe-h200").string());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "of series 'cuda_probe': side by side shows runs of one series"));
  o = e2e::expr(dir, "across " + (data / "series3-h200").string());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "side by side needs two runs or more; 1 given"));
  o = e2e::expr(dir, "across @each-machine " + (data / "series3-h200").string() + " --history none.sqlite");
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "none.sqlite: no history here"));
}
