// `expr run --gpus`: several workers at once. On a machine without a GPU it runs CPU experiments in
// N workers, which exercises the same scheduler as one worker per GPU: the verdicts are a serial
// run's, the experiments are listed in the plan's order, the costliest (by the history) start
// first; a malformed --gpus is refused up front.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "harness.hpp"

namespace {

using e2e::has;

// sleeper busy-waits base_us * (size/1024)^k µs per call; slow's setup() sleeps 1 s, so its two
// points cost far more than the others and overlap visibly when two workers run at once.
const std::string series = R"(series: parallel
defaults:
  device: cpu
  # 40 samples: the median's 95% interval then leaves out the calls a loaded machine preempted (with 3 to 15 it spanned them)
  iterations: {warmup: 1, traced: 1, min_samples: 40, min_time: 0.02, max_time: 1}
experiments:
  - name: quick
    plugin: sleeper
    params: {k: 1, base_us: 50}
    axes: {size: [1024, 2048, 4096]}
    expect:
      - host_time < slow.host_time
  - name: slow
    plugin: sleeper
    params: {k: 1, base_us: 150, setup_ms: 1000}
    axes: {size: [1024, 2048]}
    sweep_expect:
      - slope(host_time, size) ~ 1 ± 0.3
)";

std::map<std::string, std::string> verdicts(const nlohmann::json& results) {
  std::map<std::string, std::string> out;
  for (const auto& e : results.at("experiments"))
    for (const auto& g : e.at("guesses")) out[e.at("name").get<std::string>() + ": " + g.at("check").get<std::string>()] = g.at("verdict");
  for (const auto& g : results.at("sweep_guesses")) out[g.at("family").get<std::string>() + ": " + g.at("check").get<std::string>()] = g.at("verdict");
  return out;
}

std::vector<std::string> names(const nlohmann::json& results) {
  std::vector<std::string> out;
  for (const auto& e : results.at("experiments")) out.push_back(e.at("name"));
  return out;
}

// When a step of an experiment's timeline happened (CLOCK_MONOTONIC ns).
double at(const nlohmann::json& experiment, const std::string& step) {
  for (const auto& m : experiment.at("timeline"))
    if (m.at("step") == step) return m.at("at_ns");
  FAIL("no step " << step << " in " << experiment.at("name"));
  return 0;
}

// The experiments in the order their workers were spawned.
std::vector<std::string> start_order(const nlohmann::json& results) {
  std::vector<std::pair<double, std::string>> spawned;
  for (const auto& e : results.at("experiments")) spawned.emplace_back(at(e, "spawned"), e.at("name"));
  std::sort(spawned.begin(), spawned.end());
  std::vector<std::string> out;
  for (const auto& [t, name] : spawned) out.push_back(name);
  return out;
}

}  // namespace

TEST_CASE("--gpus 2 with CPU experiments and no GPU: two workers at once, a serial run's verdicts, the plan's order, the costliest first") {
  const auto dir = e2e::scratch("gpus_cpu");
  e2e::write(dir, "series.yaml", series);
  // The serial run records each point's wall time in the history (runs/history.sqlite).
  const auto serial = e2e::expr(dir, "run series.yaml --out serial");
  INFO(serial.all());
  REQUIRE(serial.exit_code == 0);
  const auto serial_results = e2e::read_json(dir / "serial" / "results.json");
  CHECK(verdicts(serial_results).at("quick[size=1024]: host_time < slow.host_time") == "confirmed");
  CHECK(start_order(serial_results) == names(serial_results));  // serially, in the plan's order

  const auto parallel = e2e::expr(dir, "run series.yaml --gpus 2 --out parallel");
  INFO(parallel.all());
  // A machine with one GPU (scripts/on-gpu's single H200) cannot give two workers a GPU each: the
  // run is refused before anything runs.
  if (has(parallel.err, "this machine has 1 CUDA device")) {
    CHECK(parallel.exit_code == 2);
    CHECK(!std::filesystem::exists(dir / "parallel" / "results.json"));
    return;
  }
  REQUIRE(parallel.exit_code == 0);
  // Where the machine has GPUs (scripts/on-gpu), the two workers are pinned to GPU 0 and 1 even for
  // CPU experiments; on CI's machine they are two CPU workers.
  CHECK((has(parallel.err, "2 workers at once on the CPU") || has(parallel.err, "one worker per GPU: 0, 1")));
  const auto results = e2e::read_json(dir / "parallel" / "results.json");
  CHECK(verdicts(results) == verdicts(serial_results));
  CHECK(names(results) == names(serial_results));
  // slow's points took longest last time: they start first, side by side, and overlap.
  const auto order = start_order(results);
  REQUIRE(order.size() == 5);
  CHECK(std::is_permutation(order.begin(), order.begin() + 2, std::vector<std::string>{"slow[size=1024]", "slow[size=2048]"}.begin()));
  const auto& a = e2e::experiment(results, "slow[size=1024]");
  const auto& b = e2e::experiment(results, "slow[size=2048]");
  CHECK(std::max(at(a, "spawned"), at(b, "spawned")) < std::min(at(a, "ended"), at(b, "ended")));
  // Never more than two at once: at each spawn, at most one other worker is alive.
  for (const auto& e : results.at("experiments")) {
    int alive = 0;
    for (const auto& other : results.at("experiments"))
      if (at(other, "spawned") <= at(e, "spawned") && at(e, "spawned") < at(other, "ended")) ++alive;
    CHECK_MESSAGE(alive <= 2, e.at("name"));
  }
  for (const auto& e : results.at("experiments")) CHECK(!e.at("environment").contains("gpu_index"));  // CPU experiments ran on no GPU
}

// The refusal without a CUDA device of an experiment that may run on one is not checked here: in
// a build without CUDA no plugin, LibTorch's masked_fill included, declares cuda, so every
// experiment is a CPU one.
TEST_CASE("a malformed --gpus is refused before anything runs") {
  const auto dir = e2e::scratch("gpus_refused");
  e2e::write(dir, "series.yaml", series);
  for (const auto* bad : {"x", "1,1", "-1", "0", "2,x"}) {
    const auto o = e2e::expr(dir, std::string("run series.yaml --no-history --gpus '") + bad + "' --out run");
    INFO(bad << "\n" << o.all());
    CHECK(o.exit_code == 2);
    CHECK(has(o.err, std::string("error: --gpus ") + bad + ": "));
    CHECK(!std::filesystem::exists(dir / "run" / "results.json"));
  }
}
