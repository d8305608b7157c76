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

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// sleeper busy-waits base_us * (size/1024)^k µs: quadratic takes 50, 200, 800 µs, linear 140, 280,
// 560 µs, so `host_time < linear.host_time` holds at 1024 and 2048 and fails at 4096, whatever the
// machine's noise; linear's setup() sleeps 1.5 s, so that a shard can be killed between points. In series order, round-robin over 3 shards puts quadratic's points in shards
// 0, 1, 2 and linear's in 1, 2, 0: each point's guess reads a point of another shard.
const std::string series = R"(series: sharded
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 5, min_time: 0.02, max_time: 0.3}
experiments:
  - name: quadratic
    plugin: sleeper
    params: {k: 2, base_us: 50}
    axes: {size: pow2(1024, 4096)}
    expect:
      - host_time < linear.host_time
    sweep_expect:
      - slope(host_time, size) ~ 2 ± 0.3
      - crossover(host_time, size, linear) ~ 2500 within 25%
  - name: single
    plugin: sleeper
    params: {k: 1, base_us: 20}
  - name: linear
    plugin: sleeper
    params: {k: 1, base_us: 140, setup_ms: 1500}
    axes: {size: pow2(1024, 4096)}
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

TEST_CASE("a series run in 3 shards and merged gives the serial run's verdicts; a missing shard is named and exits with 5") {
  const auto dir = e2e::scratch("shard_merge");
  e2e::write(dir, "series.yaml", series);
  const auto serial = e2e::expr(dir, "run series.yaml --out serial");
  INFO(serial.all());
  REQUIRE(serial.exit_code == 0);
  const auto serial_results = e2e::read_json(dir / "serial" / "results.json");

  const auto dry = e2e::expr(dir, "run series.yaml --shard 0/3 --dry-run");
  CHECK(has(dry.out, "  quadratic[size=1024]\n  single\n  linear[size=4096]\n3 experiments\n"));

  std::set<std::string> union_of_shards;
  std::string fingerprint;
  for (int k = 0; k < 3; ++k) {
    const auto shard = std::to_string(k) + "/3";
    const auto o = e2e::expr(dir, "run series.yaml --shard " + shard + " --out shard" + std::to_string(k));
    INFO(o.all());
    CHECK(o.exit_code == 0);
    const auto results = e2e::read_json(dir / ("shard" + std::to_string(k)) / "results.json");
    CHECK(results.at("shard").at("index") == k);
    CHECK(results.at("shard").at("count") == 3);
    CHECK(results.at("shard").at("plan").size() == 7);
    if (k == 0) fingerprint = results.at("shard").at("series_fingerprint");
    CHECK(results.at("shard").at("series_fingerprint") == fingerprint);
    for (const auto& name : names(results)) CHECK_MESSAGE(union_of_shards.insert(name).second, name << " ran in two shards");
  }
  CHECK(union_of_shards == names(serial_results));

  // Inside a shard, a guess reading another shard's point and a sweep guess say why they wait.
  const auto shard0 = e2e::read_json(dir / "shard0" / "results.json");
  const auto& spanning = e2e::guess(e2e::experiment(shard0, "quadratic[size=1024]"), "host_time < linear.host_time");
  CHECK(spanning.at("verdict") == "not evaluable");
  CHECK(has(spanning.at("reason").get<std::string>(), "reads linear[size=1024] (shard 1/3), in another shard; `expr merge` judges this guess"));
  for (const auto& g : shard0.at("sweep_guesses")) {
    CHECK(g.at("verdict") == "not evaluable");
    CHECK(has(g.at("reason").get<std::string>(), "the sweep spans other shards: "));
  }

  const auto merged = e2e::expr(dir, "merge shard2 shard0 shard1 --out merged");
  INFO(merged.all());
  CHECK(merged.exit_code == serial.exit_code);
  CHECK(has(merged.out, "7 of 7 experiments have a result"));
  const auto merged_results = e2e::read_json(dir / "merged" / "results.json");
  const auto expected = verdicts(serial_results);
  CHECK(expected.at("quadratic[size=1024]: host_time < linear.host_time") == "confirmed");
  CHECK(expected.at("quadratic[size=4096]: host_time < linear.host_time") == "contradicted");
  CHECK(expected.at("quadratic sweep: crossover(host_time, size, linear) ~ 2500 within 25%") == "confirmed");
  CHECK(verdicts(merged_results) == expected);
  CHECK(merged_results.at("planned") == 7);
  for (const auto& name : names(serial_results)) {
    CHECK(std::filesystem::exists(dir / "merged" / "experiments" / name / "expr_trace.json"));
    CHECK(std::filesystem::exists(dir / "merged" / "experiments" / name / "chrome_trace.json"));
  }
  for (const auto* file : {"summary.md", "junit.xml", "report.html", "series.yaml"}) CHECK(std::filesystem::exists(dir / "merged" / file));

  // Shard 1 not given, and shard 2 killed (SIGKILL) once its first point, quadratic[size=4096], has
  // a result and before linear[size=2048] has one.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);  // the killed run's orphaned worker comes back here
  const int pid = e2e::start_expr(dir, {"run", "series.yaml", "--shard", "2/3", "--out", "killed2"});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool first_done = false;
  while (!first_done && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (std::filesystem::exists(dir / "killed2" / "results.json"))
      first_done = names(e2e::read_json(dir / "killed2" / "results.json")).count("quadratic[size=4096]") > 0;
  }
  REQUIRE(first_done);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  int status = 0;
  while (::waitpid(-1, &status, 0) > 0) {
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  REQUIRE(names(e2e::read_json(dir / "killed2" / "results.json")) == std::set<std::string>{"quadratic[size=4096]"});

  const auto partial = e2e::expr(dir, "merge shard0 killed2 --out partial");
  INFO(partial.all());
  CHECK(partial.exit_code == 5);
  CHECK(has(partial.out, "4 of 7 experiments have a result"));
  CHECK(has(partial.out, "missing 3 experiments:\n"));
  CHECK(has(partial.out, "  quadratic[size=2048] (shard 1/3, whose directory was not given)\n"));
  CHECK(has(partial.out, "  linear[size=1024] (shard 1/3, whose directory was not given)\n"));
  CHECK(has(partial.out, "  linear[size=2048] (shard 2/3, which did not finish it)\n"));
  const auto partial_results = e2e::read_json(dir / "partial" / "results.json");
  CHECK(partial_results.at("planned") == 7);
  const auto& unread = e2e::guess(e2e::experiment(partial_results, "quadratic[size=1024]"), "host_time < linear.host_time");
  CHECK(unread.at("verdict") == "not evaluable");
}

TEST_CASE("shards of different series are refused unless --allow-mixed, which shows the mix") {
  const auto dir = e2e::scratch("shard_mixed");
  e2e::write(dir, "series.yaml", series);
  e2e::write(dir, "changed.yaml", series + "  - name: extra\n    plugin: sleeper\n");
  CHECK(e2e::expr(dir, "run series.yaml --shard 0/2 --out a --filter '^quadratic\\[size=1024'").exit_code == 0);
  CHECK(e2e::expr(dir, "run changed.yaml --shard 1/2 --out b --filter single").exit_code == 0);

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
