// The cold first call with LibTorch on the CPU: the cold call's framework ops through the op
// tracer, and the check that setup did not run the measured work (the op tracer watches setup).
#include <doctest/doctest.h>

#include "harness.hpp"

using e2e::guess;
using e2e::experiment;

namespace {

std::string text(const nlohmann::json& j, const char* key) { return j.value(key, ""); }

nlohmann::json run(const std::string& name, const std::string& series) {
  const auto dir = e2e::scratch(name);
  e2e::write(dir, "series.yaml", series);
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  return e2e::read_json(dir / "run" / "results.json");
}

}  // namespace

TEST_CASE("cold.ops reads the framework ops of the cold call, traced in a second worker") {
  const auto results = run("cold_torch_ops", R"(series: cold_ops
defaults:
  device: cpu
  params: {batch: 1, heads: 2, seq: 32, head_dim: 8, dtype: fp32}
  iterations: {warmup: 1, traced: 1, min_samples: 5, min_time: 0.01, max_time: 0.3}
experiments:
  - name: naive
    plugin: masked_fill
    expect:
      - cold.ops("^aten::masked_fill$") == 1
      - cold.ops("^aten::clone$") == ops("^aten::clone$")
)");
  const auto& naive = experiment(results, "naive");
  CHECK(naive.at("status") == "ok");
  CHECK(guess(naive, "cold.ops(\"^aten::masked_fill$\") == 1").at("verdict") == "confirmed");
  CHECK(guess(naive, "cold.ops(\"^aten::clone$\") == ops(\"^aten::clone$\")").at("verdict") == "confirmed");
  // The real plugin prepares only inputs in setup and checks its first call in verify().
  CHECK(text(naive, "reason").empty());
  CHECK(naive.at("correctness").at(0).at("ok") == true);
  CHECK_FALSE(naive.at("cold").contains("setup_warning"));
}

TEST_CASE("a LibTorch plugin whose setup runs the measured work is told its first call was not cold") {
  const auto results = run("cold_torch_setup_rule", R"(series: setup_rule
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 5, min_time: 0.01, max_time: 0.3}
experiments:
  - name: warm_setup
    plugin: setup_rule
    params: {work_in_setup: true}
    expect: [first_call > 0ns]
  - name: clean_setup
    plugin: setup_rule
    expect: [first_call > 0ns]
)");
  const auto finding =
      "setup() dispatched every framework op that run() dispatches (aten::matmul): setup ran the measured work, so the first "
      "call was not cold (expr/plugin.hpp: setup must not run the measured work)";
  const auto& warm = experiment(results, "warm_setup");
  CHECK(warm.at("status") == "ok");  // a note, not a failure: the figures are kept
  CHECK(text(warm, "setup_warning") == finding);
  CHECK(text(warm, "reason") == finding);
  const auto& judged = guess(warm, "first_call > 0ns");
  REQUIRE(judged.contains("caveats"));
  CHECK(judged.at("caveats").at(0) == finding);
  // Setup that only makes inputs (aten::randn) raises nothing.
  const auto& clean = experiment(results, "clean_setup");
  CHECK(clean.at("status") == "ok");
  CHECK_FALSE(clean.contains("setup_warning"));
  CHECK_FALSE(guess(clean, "first_call > 0ns").contains("caveats"));
}
