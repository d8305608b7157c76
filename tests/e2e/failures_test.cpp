// A plugin that throws, crashes, hangs or computes the wrong result fails its own experiment with a
// clear reason; the experiments around it keep their results; the exit code says an experiment failed.
#include <doctest/doctest.h>

#include <fstream>

#include "harness.hpp"

using e2e::experiment;

namespace {

// healthy_before, the faulty one, healthy_after: the neighbours must survive whatever happens.
nlohmann::json run_with_fault(const std::string& fault, int expected_exit = 3) {
  const auto dir = e2e::scratch("fault_" + fault);
  e2e::write(dir, "series.yaml", R"(series: faults
defaults:
  device: cpu
  timeout: 3
  iterations: {warmup: 1, traced: 2, min_samples: 5, min_time: 0.01, max_time: 0.2}
experiments:
  - name: healthy_before
    plugin: faulty
  - name: broken
    plugin: faulty
    params: {fault: )" + fault + R"(}
  - name: healthy_after
    plugin: faulty
    expect: [host_time < broken.host_time]
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == expected_exit);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  for (const auto& name : {"healthy_before", "healthy_after"}) {
    const auto& healthy = experiment(results, name);
    CHECK(healthy.at("status") == "ok");
    CHECK(healthy.at("timing").at("host").at("count").get<int>() >= 5);
    CHECK(e2e::guess(healthy, "ranges(\"^sum$\") == 1").at("verdict") == "confirmed");  // the plugin's guess
  }
  // A guess that reads the broken experiment cannot be judged, and says why.
  const auto& reader = e2e::guess(experiment(results, "healthy_after"), "host_time < broken.host_time");
  CHECK(reader.at("verdict") == "not evaluable");
  CHECK(reader.at("reason").get<std::string>().starts_with("broken: experiment "));
  return experiment(results, "broken");
}

std::string reason(const nlohmann::json& e) { return e.at("reason").get<std::string>(); }

}  // namespace

TEST_CASE("a plugin that throws in setup fails its experiment with the exception's message") {
  const auto broken = run_with_fault("throw_in_setup");
  CHECK(broken.at("status") == "failed");
  CHECK(reason(broken) == "setup: faulty: failing in setup as asked");
}

TEST_CASE("a plugin that throws in run fails its experiment, naming the phase") {
  const auto broken = run_with_fault("throw_in_run");
  CHECK(broken.at("status") == "failed");
  CHECK(reason(broken) == "warm-up: faulty: failing in run as asked");
  CHECK(broken.at("timing").contains("first_call_ns"));  // what was measured before the fault is kept
}

TEST_CASE("a plugin that segfaults is recorded as crashed by SIGSEGV") {
  const auto broken = run_with_fault("segfault");
  CHECK(broken.at("status") == "crashed");
  CHECK(reason(broken).find("killed by SIGSEGV (Segmentation fault) during warm-up") != std::string::npos);
}

TEST_CASE("a plugin that aborts is recorded as crashed by SIGABRT") {
  const auto broken = run_with_fault("abort");
  CHECK(broken.at("status") == "crashed");
  CHECK(reason(broken).find("killed by SIGABRT") != std::string::npos);
}

TEST_CASE("a plugin that hangs is stopped at its timeout and recorded as timed out") {
  const auto broken = run_with_fault("hang");
  CHECK(broken.at("status") == "timed_out");
  CHECK(reason(broken).find("no result after the 3 s timeout (last phase: warm-up)") != std::string::npos);
}

TEST_CASE("a variant whose result is wrong fails loudly instead of being timed") {
  const auto broken = run_with_fault("wrong_result");
  CHECK(broken.at("status") == "failed");
  CHECK(reason(broken).find("verify: sum vs the same sum: relative error 0.5 exceeds the tolerance 1e-12") != std::string::npos);
  CHECK(broken.at("timing").contains("first_call_ns"));  // verify() checks the first call's result
  CHECK_FALSE(broken.at("timing").contains("host"));
}

TEST_CASE("an empty result (a size of 0) is not called a wrong result") {
  // It failed as "the variant computes the wrong result", the relative error being 0 / 0.
  const auto broken = run_with_fault("none, size: 0");
  CHECK(broken.at("status") == "failed");
  CHECK(reason(broken) == "verify: sum vs the same sum: the relative error is NaN, so the result cannot be checked: the output or its "
                          "reference is empty or not finite (a parameter such as a size or batch of 0 leads to this)");
}

TEST_CASE("a required guess that the trace contradicts makes the exit code 1, one not required does not") {
  const auto dir = e2e::scratch("required");
  e2e::write(dir, "series.yaml", R"(series: gate
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}
experiments:
  - name: sums
    plugin: faulty
    expect:
      - ranges("^sum$") == 2
      - check: fact("elements") == 4096
        required: true
)");
  auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 0);  // the contradicted guess is a finding, not a failure
  CHECK(o.out.find("✗ sums: ranges(\"^sum$\") == 2") != std::string::npos);
  CHECK(o.out.find("observed 1, guessed == 2") != std::string::npos);

  e2e::write(dir, "series.yaml", R"(series: gate
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}
experiments:
  - name: sums
    plugin: faulty
    expect:
      - check: ranges("^sum$") == 2
        required: true
)");
  o = e2e::expr(dir, "run series.yaml --out run --force");
  INFO(o.all());
  CHECK(o.exit_code == 1);
  CHECK(o.out.find("(required)") != std::string::npos);
  std::ifstream xml(dir / "run" / "junit.xml");
  const std::string junit((std::istreambuf_iterator<char>(xml)), {});
  CHECK(junit.find("<failure message=\"required guess contradicted\">") != std::string::npos);
}
