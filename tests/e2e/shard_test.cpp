// Shards and merge: `expr run --shard K/N` runs a deterministic part of a series, `expr merge`
// joins the parts into one run directory with the verdicts a serial run gives, names what is
// missing, and refuses shards of different series.
#include <doctest/doctest.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "harness.hpp"

namespace {

using e2e::has;

// sleeper busy-waits base_us * (size/1024)^k µs: quadratic takes 4, 16, 1024 µs at 1024, 2048,
// 16384, linear 24, 48, 384 µs there, so `host_time < linear.host_time` holds at 1024 and 2048 (by
// 6x and 3x) and fails at 16384 (by 2.7x), beyond a loaded machine's noise, and no wait is long
// enough for a busy machine's preemptions to stretch its median; linear's setup()
// sleeps 1.5 s, so that a shard can be killed between points. Without a history (--no-history),
// every point costs the same, and the shards take the points in the order of their identities,
// round the shards: with 3 shards, linear[size=1024] 0, 16384 1, 2048 2, 32768 0,
// quadratic[size=1024] 1, 16384 2, 2048 0, single 1. Each quadratic point's guess reads a linear
// point of another shard. The crossover is where the difference, linear along log(size) between
// 2048 (-32 µs) and 16384 (+640 µs), is zero: at 2260 (the curves themselves cross at 6144).
const std::string series = R"(series: sharded
defaults:
  device: cpu
  # 40 samples: the median's 95% interval then leaves out the calls a loaded machine preempted (with 3 to 15 it spanned them)
  iterations: {warmup: 1, traced: 1, min_samples: 40, min_time: 0.02, max_time: 1}
experiments:
  - name: quadratic
    plugin: sleeper
    params: {k: 2, base_us: 4}
    axes: {size: [1024, 2048, 16384]}
    expect:
      - host_time < linear.host_time
    sweep_expect:
      - slope(host_time, size) ~ 2 ± 0.3
      - crossover(host_time, size, linear) ~ 2260 within 25%
  - name: single
    plugin: sleeper
    params: {k: 1, base_us: 20}
  - name: linear
    plugin: sleeper
    params: {k: 1, base_us: 24, setup_ms: 1500}
    axes: {size: [1024, 2048, 16384, 32768]}
    sweep_expect:
      - slope(host_time, size) ~ 1 ± 0.3
)";

// Every verdict of a results.json: each experiment's guesses and each sweep guess, by what it is.
std::map<std::string, std::string> verdicts(const nlohmann::json& results) {
  std::map<std::string, std::string> out;
  for (const auto& e : results.at("experiments"))
    for (const auto& g : e.at("guesses")) out[e.at("name").get<std::string>() + ": " + g.at("check").get<std::string>()] = g.at("verdict");
  for (const auto& g : results.at("sweep_guesses"))
    out[g.at("family").get<std::string>() + " sweep: " + g.at("check").get<std::string>()] = g.at("verdict");
  return out;
}

std::set<std::string> names(const nlohmann::json& results) {
  std::set<std::string> out;
  for (const auto& e : results.at("experiments")) out.insert(e.at("name"));
  return out;
}

}  // namespace

TEST_CASE("a series run in 3 shards and merged gives the serial run's verdicts, and a missing or unfinished shard is named, exits with 6 and is resumed") {
  const auto dir = e2e::scratch("shard_merge");
  e2e::write(dir, "series.yaml", series);
  const auto serial = e2e::expr(dir, "run series.yaml --no-history --out serial");
  INFO(serial.all());
  REQUIRE(serial.exit_code == 0);
  const auto serial_results = e2e::read_json(dir / "serial" / "results.json");
  const auto expected = verdicts(serial_results);
  CHECK(expected.at("quadratic[size=1024]: host_time < linear.host_time") == "confirmed");
  CHECK(expected.at("quadratic[size=16384]: host_time < linear.host_time") == "contradicted");
  CHECK(expected.at("quadratic sweep: crossover(host_time, size, linear) ~ 2260 within 25%") == "confirmed");

  const auto dry = e2e::expr(dir, "run series.yaml --no-history --shard 0/3 --dry-run");
  CHECK(has(dry.out, "  quadratic[size=2048]\n  linear[size=1024]\n  linear[size=32768]\n3 experiments\n"));

  std::set<std::string> union_of_shards;
  std::string fingerprint;
  for (int k = 0; k < 3; ++k) {
    const auto shard = std::to_string(k) + "/3";
    const auto o = e2e::expr(dir, "run series.yaml --no-history --shard " + shard + " --out shard" + std::to_string(k));
    INFO(o.all());
    CHECK(o.exit_code == 0);
    const auto results = e2e::read_json(dir / ("shard" + std::to_string(k)) / "results.json");
    CHECK(results.at("shard").at("index") == k);
    CHECK(results.at("shard").at("count") == 3);
    CHECK(results.at("shard").at("plan").size() == 8);
    if (k == 0) fingerprint = results.at("shard").at("series_fingerprint");
    CHECK(results.at("shard").at("series_fingerprint") == fingerprint);
    CHECK(e2e::read_json(dir / ("shard" + std::to_string(k)) / "plan.json").at("request").at("shard") == shard);
    for (const auto& name : names(results)) CHECK_MESSAGE(union_of_shards.insert(name).second, name << " ran in two shards");
  }
  CHECK(union_of_shards == names(serial_results));

  // Inside a shard, a guess reading another shard's point and a sweep guess say why they wait.
  const auto shard1 = e2e::read_json(dir / "shard1" / "results.json");
  const auto& spanning = e2e::guess(e2e::experiment(shard1, "quadratic[size=1024]"), "host_time < linear.host_time");
  CHECK(spanning.at("verdict") == "not evaluable");
  CHECK(has(spanning.at("reason").get<std::string>(), "reads linear[size=1024] (shard 0/3), in another shard; `expr merge` judges this guess"));
  REQUIRE(!shard1.at("sweep_guesses").empty());
  for (const auto& g : shard1.at("sweep_guesses")) {
    CHECK(g.at("verdict") == "not evaluable");
    CHECK(has(g.at("reason").get<std::string>(), "the sweep spans other shards: "));
  }

  const auto merged = e2e::expr(dir, "merge shard2 shard0 shard1 --out merged");
  INFO(merged.all());
  CHECK(merged.exit_code == serial.exit_code);
  CHECK(has(merged.out, "8 of 8 experiments have a result"));
  const auto merged_results = e2e::read_json(dir / "merged" / "results.json");
  CHECK(verdicts(merged_results) == expected);
  CHECK(merged_results.at("planned") == 8);
  for (const auto& name : names(serial_results)) {
    CHECK(std::filesystem::exists(dir / "merged" / "experiments" / name / "expr_trace.json"));
    CHECK(std::filesystem::exists(dir / "merged" / "traces" / name / "expr.pt.trace.json"));
  }
  for (const auto* file : {"summary.md", "junit.xml", "report.html", "series.yaml"}) CHECK(std::filesystem::exists(dir / "merged" / file));
  CHECK(!has(e2e::expr(dir, "show merged").out, "incomplete"));

  // A point a shard filtered out has no result: it is missing, not covered.
  CHECK(e2e::expr(dir, "run series.yaml --no-history --shard 1/3 --out filtered1 --filter '^(linear|quadratic)'").exit_code == 0);
  const auto filtered = e2e::expr(dir, "merge shard0 filtered1 shard2 --out filtered");
  INFO(filtered.all());
  CHECK(filtered.exit_code == 6);
  CHECK(has(filtered.out, "7 of 8 experiments have a result"));
  CHECK(has(filtered.out, "  single (shard 1/3, which did not run it: skipped"));

  // Shard 1 not given, and shard 0 killed (SIGKILL) once its first point, quadratic[size=2048], has
  // a result and before linear[size=1024] has one.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);  // the killed run's orphaned worker comes back here
  const pid_t pid = e2e::start(dir, "run series.yaml --no-history --shard 0/3 --out killed0").pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool first_done = false;
  while (!first_done && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (std::filesystem::exists(dir / "killed0" / "results.json"))
      first_done = names(e2e::read_run(dir / "killed0")).count("quadratic[size=2048]") > 0;
  }
  REQUIRE(first_done);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  int status = 0;
  while (::waitpid(-1, &status, 0) > 0) {
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  REQUIRE(names(e2e::read_run(dir / "killed0")) == std::set<std::string>{"quadratic[size=2048]"});

  const auto partial = e2e::expr(dir, "merge killed0 shard2 --out partial");
  INFO(partial.all());
  CHECK(partial.exit_code == 6);
  CHECK(has(partial.out, "3 of 8 experiments have a result"));
  CHECK(has(partial.out, "missing 5 experiments:\n"));
  CHECK(has(partial.out, "  quadratic[size=1024] (shard 1/3, whose directory was not given)\n"));
  CHECK(has(partial.out, "  single (shard 1/3, whose directory was not given)\n"));
  CHECK(has(partial.out, "  linear[size=1024] (shard 0/3, which did not finish it)\n"));
  CHECK(has(partial.out, "  linear[size=32768] (shard 0/3, which did not finish it)\n"));
  const auto partial_results = e2e::read_json(dir / "partial" / "results.json");
  CHECK(partial_results.at("planned") == 8);
  const auto& unread = e2e::guess(e2e::experiment(partial_results, "quadratic[size=16384]"), "host_time < linear.host_time");  // linear[size=16384] is in shard 1
  CHECK(unread.at("verdict") == "not evaluable");

  // `expr show` on the merged run says what runs the rest: each shard, not the merged directory.
  const auto shown = e2e::expr(dir, "show partial");
  INFO(shown.all());
  const auto killed0 = std::filesystem::canonical(dir / "killed0").string();
  CHECK(has(shown.out, "incomplete: merged from shards, 3 of 8 planned experiments have a result"));
  CHECK(has(shown.out, "shard 0/3 did not finish 2 experiments: "));
  CHECK(has(shown.out, " run --resume " + killed0 + "\n"));
  CHECK(has(shown.out, "shard 1/3 was not merged (3 experiments): "));
  CHECK(has(shown.out, " run series.yaml --shard 1/3 --out shard-1\n"));
  CHECK(!has(shown.out, "--resume " + std::filesystem::canonical(dir / "partial").string()));

  // The killed shard resumed runs only what it lacked, and the merge is then whole.
  const auto resumed = e2e::expr(dir, "run --resume killed0 --no-history");
  INFO(resumed.all());
  CHECK(resumed.exit_code == 0);
  CHECK(has(resumed.err, "1 of 3 experiments have a result; running the other 2"));
  const auto whole = e2e::expr(dir, "merge killed0 shard1 shard2 --out whole");
  INFO(whole.all());
  CHECK(whole.exit_code == 0);
  CHECK(verdicts(e2e::read_json(dir / "whole" / "results.json")) == expected);
}

TEST_CASE("shards of different series are refused unless --allow-mixed, which shows the mix") {
  const auto dir = e2e::scratch("shard_mixed");
  e2e::write(dir, "series.yaml", series);
  e2e::write(dir, "changed.yaml", series + "  - name: extra\n    plugin: sleeper\n");
  CHECK(e2e::expr(dir, "run series.yaml --no-history --shard 0/2 --out a --filter '^quadratic\\[size=1024'").exit_code == 0);
  CHECK(e2e::expr(dir, "run changed.yaml --no-history --shard 1/2 --out b --filter single").exit_code == 0);

  const auto refused = e2e::expr(dir, "merge a b --out merged");
  INFO(refused.all());
  CHECK(refused.exit_code == 2);
  CHECK(has(refused.err, "error: the shards differ in series (name and fingerprint): sharded "));
  CHECK(has(refused.err, "refusing to merge shards of different series or environments; --allow-mixed"));
  CHECK(!std::filesystem::exists(dir / "merged"));

  const auto mixed = e2e::expr(dir, "merge a b --out merged --allow-mixed");
  INFO(mixed.all());
  CHECK(has(mixed.err, "mixed: series (name and fingerprint): sharded "));
  CHECK(has(mixed.err, "(shard 0/2) | sharded "));
  CHECK(std::filesystem::exists(dir / "merged" / "results.json"));

  const auto twice = e2e::expr(dir, "merge a a --out twice");
  CHECK(twice.exit_code == 2);
  CHECK(has(twice.err, "error: shard 0/2 is given twice: a and a"));
  const auto bad = e2e::expr(dir, "run series.yaml --shard 3/3");
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "--shard 3/3: K counts from 0 and must be less than N"));
}
