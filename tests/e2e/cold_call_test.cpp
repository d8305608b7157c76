// The cold first call end to end, without LibTorch: the first call pays a plugin's lazy
// initialisation and the timed calls do not; correctness is accepted only from verify(), after
// that call; and the cold call's own trace, taken in a second worker when a guess reads cold.*.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "harness.hpp"

namespace fs = std::filesystem;
using e2e::guess;
using e2e::experiment;

namespace {

constexpr double ms = 1e6;  // nanoseconds

std::string text(const nlohmann::json& j, const char* key) { return j.value(key, ""); }


struct Run {
  fs::path dir;  // the run directory
  nlohmann::json results;
};

// Runs lazy_init (a 50 ms lazy initialisation) as `lazy`, with these guesses, and once more as
// `lazy_plain`, without.
Run run_lazy(const std::string& name, const std::vector<std::string>& guesses) {
  const auto dir = e2e::scratch(name);
  std::string expect;
  for (const auto& g : guesses) expect += "      - '" + g + "'\n";
  e2e::write(dir, "series.yaml", R"(series: cold
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 2, min_samples: 10, min_time: 0.01, max_time: 0.5}
experiments:
  - name: lazy
    plugin: lazy_init
    expect:
)" + expect + R"(  - name: lazy_plain
    plugin: lazy_init
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  return {dir / "run", e2e::read_json(dir / "run" / "results.json")};
}

}  // namespace

TEST_CASE("the first call pays a plugin's lazy initialisation, the timed calls do not") {
  const auto results = run_lazy("cold_lazy", {"first_call > 50ms", "host_time < 5ms"}).results;
  const auto& lazy = experiment(results, "lazy");
  CHECK(lazy.at("status") == "ok");
  CHECK(lazy.at("timing").at("first_call_ns").get<double>() >= 50 * ms);
  CHECK(lazy.at("timing").at("host").at("median_ns").get<double>() < 5 * ms);
  CHECK(guess(lazy, "first_call > 50ms").at("verdict") == "confirmed");
  CHECK(guess(lazy, "host_time < 5ms").at("verdict") == "confirmed");
}

TEST_CASE("a plugin without verify() has no correctness figure, and rel_error says so") {
  const auto results = run_lazy("cold_no_verify", {"rel_error < 1e-2"}).results;
  const auto& lazy = experiment(results, "lazy");
  CHECK(lazy.at("status") == "ok");
  CHECK(lazy.at("correctness").empty());
  const auto& judged = guess(lazy, "rel_error < 1e-2");
  CHECK(judged.at("verdict") == "not evaluable");
  CHECK(text(judged, "reason") == "plugin lazy_init reported no correctness figure");
}

TEST_CASE("a plugin that reports correctness from setup fails, naming the plugin and the hook") {
  const auto dir = e2e::scratch("cold_correctness_in_setup");
  e2e::write(dir, "series.yaml", R"(series: rule
defaults: {device: cpu, iterations: {warmup: 1, traced: 1, min_samples: 5, min_time: 0.01, max_time: 0.2}}
experiments:
  - name: checks_in_setup
    plugin: faulty
    params: {fault: correctness_in_setup}
  - name: checks_in_verify
    plugin: faulty
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 3);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  const auto& bad = experiment(results, "checks_in_setup");
  CHECK(bad.at("status") == "failed");
  CHECK(text(bad, "reason") ==
        "setup: plugin faulty called report_correctness (\"sum vs the same sum\") in setup(); correctness is accepted only "
        "from verify(), which runs after the cold first call, because setup must not run the measured work");
  CHECK_FALSE(bad.at("timing").contains("first_call_ns"));
  // The same figure reported from verify() is accepted.
  const auto& good = experiment(results, "checks_in_verify");
  CHECK(good.at("status") == "ok");
  CHECK(good.at("correctness").at(0).at("ok") == true);
}

TEST_CASE("cold.* guesses read the cold call's own trace, taken in a second worker") {
  const auto [run, results] = run_lazy("cold_trace", {"cold.ranges(\"^lazy init$\") == 1", "ranges(\"^lazy init$\") == 0",
                                                      "cold.host_time >= 50ms", "cold.first_call >= cold.host_time",
                                                      "cold.ops(\"^aten::\") == 0", "cold.api_calls(\"cudaLaunch\") == 0",
                                                      "cold.gpu_time < 1ms"});
  const auto& lazy = experiment(results, "lazy");
  const auto verdict = [&](const char* check) { return guess(lazy, check).at("verdict").get<std::string>(); };
  const auto reason = [&](const char* check) { return text(guess(lazy, check), "reason"); };
  // The lazy initialisation is in the cold call's trace and in none of the warm traced calls.
  CHECK(verdict("cold.ranges(\"^lazy init$\") == 1") == "confirmed");
  CHECK(verdict("ranges(\"^lazy init$\") == 0") == "confirmed");
  CHECK(verdict("cold.host_time >= 50ms") == "confirmed");
  CHECK(verdict("cold.first_call >= cold.host_time") == "confirmed");
  // What the cold trace cannot show on the CPU without a framework op tracer is not evaluable, with the reason.
  CHECK(verdict("cold.ops(\"^aten::\") == 0") == "not evaluable");
  CHECK(reason("cold.ops(\"^aten::\") == 0") ==
        "the cold call: ops needs framework op tracing, and plugin lazy_init traces no framework ops");
  CHECK(verdict("cold.api_calls(\"cudaLaunch\") == 0") == "not evaluable");
  CHECK(reason("cold.api_calls(\"cudaLaunch\") == 0") ==
        "the cold call: api_calls needs device tracing, which was unavailable: the experiment ran on the cpu");
  CHECK(verdict("cold.gpu_time < 1ms") == "not evaluable");

  // The cold call's figures and its trace file are kept with the experiment.
  const auto& cold = lazy.at("cold");
  CHECK(cold.at("status") == "ok");
  CHECK(cold.at("timing").at("host").at("median_ns").get<double>() >= 50 * ms);
  CHECK(cold.at("trace_file") == "experiments/lazy/cold_trace.json");
  CHECK(fs::exists(run / "experiments" / "lazy" / "cold_trace.json"));
  // Only where a guess reads it.
  CHECK_FALSE(experiment(results, "lazy_plain").contains("cold"));
  CHECK_FALSE(fs::exists(run / "experiments" / "lazy_plain" / "cold_trace.json"));

  // Replay reads the cold trace again and reaches the same verdicts.
  const auto replayed = e2e::expr(run.parent_path(), "replay run --out replayed");
  INFO(replayed.all());
  CHECK(replayed.exit_code == 0);
  const auto replayed_results = e2e::read_json(run.parent_path() / "replayed" / "results.json");
  const auto& again = experiment(replayed_results, "lazy");
  for (const auto& x : e2e::guesses(lazy)) {
    INFO(x.at("check").get<std::string>());
    CHECK(guess(again, x.at("check")).at("verdict") == x.at("verdict"));
  }
}

TEST_CASE("no experiment may be called cold, and cold. is followed by a metric of the experiment's own cold call") {
  const auto dir = e2e::scratch("cold_bad_input");
  e2e::write(dir, "named_cold.yaml", R"(series: x
experiments:
  - name: cold
    plugin: lazy_init
)");
  const auto named = e2e::expr(dir, "validate named_cold.yaml");
  INFO(named.all());
  CHECK(named.exit_code == 2);
  CHECK(named.err.find("named_cold.yaml:3:11: error: experiment name 'cold' is taken: cold.metric reads an experiment's cold "
                       "first call") != std::string::npos);

  e2e::write(dir, "bad_reads.yaml", R"(series: x
experiments:
  - name: lazy
    plugin: lazy_init
    expect:
      - cold.other.host_time > 1ms
      - cold.host_tim > 1ms
  - name: other
    plugin: lazy_init
)");
  const auto reads = e2e::expr(dir, "validate bad_reads.yaml");
  INFO(reads.all());
  CHECK(reads.exit_code == 2);
  CHECK(reads.err.find("bad_reads.yaml:6:14: error: cold. reads a metric of this experiment's own cold call, and 'other' is no "
                       "metric") != std::string::npos);
  CHECK(reads.err.find("bad_reads.yaml:7:14: error: cold. reads a metric of this experiment's own cold call, and 'host_tim' is "
                       "no metric; did you mean 'host_time'?") != std::string::npos);
}
