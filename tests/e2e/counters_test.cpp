// The counters setting end to end on a machine without a GPU: a series that turns counters on runs
// as before, its experiments on the cpu say why no counters were taken (in results.json and in
// every counter guess), counters off says so in its own words, and a bad setting stops the run at
// its place in the file.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "harness.hpp"

namespace fs = std::filesystem;
using e2e::experiment;
using e2e::guess;

TEST_CASE("on the cpu, counters on and off each give their own reason, and the run goes on") {
  const auto dir = e2e::scratch("counters_cpu");
  e2e::write(dir, "series.yaml", R"(series: counters
defaults:
  device: cpu
  counters: on
  iterations: {warmup: 1, traced: 2, min_samples: 10, min_time: 0.01, max_time: 0.5}
experiments:
  - name: counted
    plugin: lazy_init
    expect: ["kernel.achieved_occupancy > 10%", "kernel.tensor_active < 50%"]
  - name: uncounted
    plugin: lazy_init
    counters: off
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  const auto& counted = experiment(results, "counted");
  CHECK(counted.at("status") == "ok");
  const auto& counters = counted.at("trace").at("counters");
  CHECK(counters.at("state") == "not_taken");
  CHECK(counters.at("reason") == "the experiment ran on the cpu, and hardware counters need a CUDA device");
  CHECK(guess(counted, "kernel.achieved_occupancy > 10%").at("verdict") == "not evaluable");
  CHECK(guess(counted, "kernel.achieved_occupancy > 10%").at("reason").get<std::string>().find(
            "achieved_occupancy needs hardware counters, and the experiment ran on the cpu") != std::string::npos);
  CHECK(guess(counted, "kernel.tensor_active < 50%").at("verdict") == "not evaluable");
  const auto& uncounted = experiment(results, "uncounted").at("trace").at("counters");
  CHECK(uncounted.at("state") == "off");
  CHECK(uncounted.at("reason").get<std::string>().starts_with("counters are off for this experiment"));
  // No experiment could take counters on the CPU, so the terminal table leaves their column out.
  const auto header = o.out.substr(o.out.find("  experiment "), o.out.find('\n', o.out.find("  experiment ")) - o.out.find("  experiment "));
  INFO(header);
  CHECK(header.find("host_time") != std::string::npos);
  CHECK(header.find("achieved_occupancy") == std::string::npos);
}

TEST_CASE("a counters setting that is not on, off or a list of known metrics stops the run at its place") {
  const auto dir = e2e::scratch("counters_bad");
  e2e::write(dir, "series.yaml", R"(series: counters
experiments:
  - name: a
    plugin: lazy_init
    counters: [achieved_occupancy, dram_troughput]
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("series.yaml:5:36: error: unknown counter metric 'dram_troughput'; did you mean 'dram_throughput'?") != std::string::npos);
  CHECK(!fs::exists(dir / "run" / "results.json"));
}
