// Paths made from data stay where they belong: a series' name names one directory under runs/, and
// a run directory from elsewhere (a CI artifact) whose results.json records hostile experiment
// names or trace files makes show, replay, merge and compare neither read nor write outside it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "harness.hpp"

namespace fs = std::filesystem;

namespace {

using e2e::has;

// The recorded run of one experiment, probe, copied to dir/run with `damage` done to its results.json.
void recorded_run(const fs::path& dir, const std::function<void(nlohmann::json&)>& damage) {
  fs::copy(fs::path(EXPR_SOURCE_DIR) / "tests/data/cuda-probe-h200", dir / "run", fs::copy_options::recursive);
  auto results = e2e::read_json(dir / "run/results.json");
  damage(results);
  std::ofstream(dir / "run/results.json") << results.dump();
}

// A secret outside the run directory that a hostile trace_file points at: JSON-looking, so that an
// error quoting what was read would show it.
constexpr const char* secret_value = "8675309";
void plant_secret(const fs::path& dir) { std::ofstream(dir / "secret.json") << "{\"secret\": " << secret_value << "}"; }

}  // namespace

TEST_CASE("a series name that would climb out of runs/ is refused at its place, and nothing is made" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("escape_series_name");
  e2e::write(dir, "series.yaml", "series: \"../../../escaped\"\nexperiments:\n  - {name: sums, plugin: faulty}\n");
  for (const auto* command : {"validate series.yaml", "run series.yaml --no-history", "run series.yaml --no-history --dry-run"}) {
    const auto o = e2e::expr(dir, command);
    INFO(command, "\n", o.all());
    CHECK(o.exit_code == 2);
    CHECK(has(o, "series.yaml:1:9: error: the series name '../../../escaped' must be letters, digits, '_', '-' and '.'"));
  }
  CHECK_FALSE(fs::exists(dir / "runs"));
  // Where runs/../../../escaped-TIME would have been made.
  for (const auto& entry : fs::directory_iterator(dir.parent_path().parent_path()))
    CHECK_FALSE(entry.path().filename().string().starts_with("escaped"));
}

TEST_CASE("show and replay read no trace outside the run directory, however results.json names it") {
  const auto dir = e2e::scratch("escape_trace_file");
  plant_secret(dir);
  const auto refused = [&](const std::string& name, const std::string& trace_file, const std::string& why) {
    const auto case_dir = dir / name;
    fs::create_directories(case_dir);
    recorded_run(case_dir, [&](auto& r) { r["experiments"][0]["trace_file"] = trace_file; });
    if (name == "link") fs::create_symlink("../../../../secret.json", case_dir / "run/experiments/probe/link.json");
    for (const auto* command : {"show run", "replay run", "replay run --out replayed"}) {
      const auto o = e2e::expr(case_dir, command);
      INFO(name, ": ", command, "\n", o.all());
      CHECK(o.exit_code == 2);
      CHECK(has(o, "results.json: the trace_file of probe: '" + trace_file.substr(0, 20)));
      CHECK(has(o, "' " + why + "; a run directory's files are read only from inside it"));
      CHECK_FALSE(has(o.err + o.out, secret_value));
    }
    fs::remove_all(case_dir / "run");  // the suite's schema check reads every results.json under its work folder
  };
  refused("climbing", "../secret.json", "climbs out with '..'");
  refused("absolute", (dir / "secret.json").string(), "is an absolute path");
  refused("link", "experiments/probe/link.json", "leads to " + fs::canonical(dir / "secret.json").string() + " through a symbolic link");
}

TEST_CASE("replay, merge and compare write no folder for an experiment name that is a path" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("escape_names");
  recorded_run(dir, [](auto& r) { r["experiments"][0]["name"] = "../../escaped"; });
  const auto message = "results.json: the experiment name '../../escaped' cannot name a folder: it holds '/', which would make it a path";
  auto o = e2e::expr(dir, "replay run --out replayed");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, message));
  o = e2e::expr(dir, "compare run run");
  CHECK(o.exit_code == 2);
  CHECK(has(o, message));
  CHECK_FALSE(fs::exists(dir / "escaped"));
  CHECK_FALSE(fs::exists(dir / "replayed/escaped"));

  // A shard whose results.json records the same name in its experiments and in its plan.
  e2e::write(dir, "series.yaml", "series: x\ndefaults:\n  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}\n"
                                 "experiments:\n  - {name: sums, plugin: faulty}\n");
  o = e2e::expr(dir, "run series.yaml --no-history --shard 0/1 --out shard");
  REQUIRE(o.exit_code == 0);
  auto results = e2e::read_json(dir / "shard/results.json");
  results["experiments"][0]["name"] = "../../escaped";
  results["shard"]["plan"][0]["experiment"] = "../../escaped";
  std::ofstream(dir / "shard/results.json") << results.dump();
  o = e2e::expr(dir, "merge shard --out merged");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, message));
  CHECK_FALSE(fs::exists(dir / "escaped"));
  for (const auto* hostile : {"run", "shard"}) fs::remove_all(dir / hostile);  // read by the suite's schema check
}

TEST_CASE("merge refuses an --out that is one of its shards, which it would clear before reading" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("escape_merge_into_shard");
  e2e::write(dir, "series.yaml", "series: x\ndefaults:\n  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}\n"
                                 "experiments:\n  - {name: a, plugin: faulty}\n  - {name: b, plugin: faulty}\n");
  REQUIRE(e2e::expr(dir, "run series.yaml --no-history --shard 0/2 --out shard0").exit_code == 0);
  REQUIRE(e2e::expr(dir, "run series.yaml --no-history --shard 1/2 --out shard1").exit_code == 0);
  const auto before = e2e::read_text(dir / "shard0/results.json");
  // Written another way than the shard's own argument: the same directory all the same.
  const auto o = e2e::expr(dir, "merge shard0 shard1 --out ./shard0/ --force");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "error: --out ./shard0/ is a shard given to merge itself (shard0); write into another directory"));
  CHECK(e2e::read_text(dir / "shard0/results.json") == before);
  CHECK(e2e::expr(dir, "merge shard0 shard1 --out merged").exit_code == 0);
}
