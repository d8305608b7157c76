// The run directory is one run's: a run locks it while it writes, a second run into it is refused
// at once, an earlier run in it is replaced only with --force (and then whole), and the lock dies
// with its run, so a killed run never blocks the next.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// One experiment named `name`; `slow` makes it time for `seconds` s.
std::string series(const std::string& name, int seconds = 0) {
  std::string text = R"(series: locked
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}
experiments:
  - name: )" + name + "\n";
  if (seconds > 0)
    text += "    plugin: sleeper\n    iterations: {min_time: " + std::to_string(seconds) + "s, max_time: " + std::to_string(seconds) +
            "s}\n";
  else
    text += "    plugin: faulty\n";
  return text;
}

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), {}};
}

using e2e::has;

}  // namespace

TEST_CASE("a second run into a directory that a run is writing is refused at once, and the first is unharmed") {
  const auto dir = e2e::scratch("lock_busy");
  e2e::write(dir, "slow.yaml", series("slow", 5));
  e2e::write(dir, "other.yaml", series("other"));
  auto first = e2e::start(dir, "run slow.yaml --out run");
  REQUIRE(e2e::eventually([&] { return fs::exists(dir / "run" / "experiments" / "slow"); }, 60s));

  const auto second_dir = dir / "second";
  fs::create_directories(second_dir);
  fs::copy_file(dir / "other.yaml", second_dir / "other.yaml");
  for (const std::string force : {"", " --force"}) {  // --force replaces an earlier run, never one being written
    const auto o = e2e::expr(second_dir, "run other.yaml --out ../run" + force);
    INFO(o.all());
    CHECK(o.exit_code == 4);
    CHECK(has(o, "error: ../run: another expr run is writing this run directory; wait for it to end, or choose another --out"));
  }

  const auto o = first.wait(120s);
  INFO(o.all());
  CHECK(o.exit_code == 0);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  CHECK(results.at("experiments").size() == 1);
  CHECK(e2e::experiment(results, "slow").at("status") == "ok");
  CHECK_FALSE(fs::exists(dir / "run" / "experiments" / "other"));
}

TEST_CASE("--out over an earlier run is refused, and --force replaces that run whole") {
  const auto dir = e2e::scratch("lock_earlier");
  e2e::write(dir, "old.yaml", series("old"));
  e2e::write(dir, "new.yaml", series("new"));
  REQUIRE(e2e::expr(dir, "run old.yaml --out run").exit_code == 0);
  const auto old_results = text_of(dir / "run" / "results.json");

  auto o = e2e::expr(dir, "run new.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "error: run: holds an earlier run; choose another --out, or add --force to replace that run (its results, "
               "reports and experiment folders are removed)"));
  CHECK(text_of(dir / "run" / "results.json") == old_results);

  o = e2e::expr(dir, "run new.yaml --out run --force");
  CHECK(o.exit_code == 0);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  CHECK(results.at("experiments").size() == 1);
  CHECK(e2e::experiment(results, "new").at("status") == "ok");
  CHECK_FALSE(fs::exists(dir / "run" / "experiments" / "old"));  // nothing of the old run mixed in
  CHECK_FALSE(fs::exists(dir / "run" / "traces" / "old"));       // where TensorBoard and HTA would find it

  // replay writes a run directory too.
  o = e2e::expr(dir, "replay run --out replayed");
  CHECK(o.exit_code == 0);
  o = e2e::expr(dir, "replay run --out replayed");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "error: replayed: holds an earlier run"));
  CHECK(e2e::expr(dir, "replay run --out replayed --force").exit_code == 0);
  o = e2e::expr(dir, "replay run --out run --force");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "error: --out run is the recorded run itself; write into another directory"));
  CHECK(fs::exists(dir / "run" / "experiments" / "new" / "expr_trace.json"));
}

TEST_CASE("the lock of a killed run dies with it") {
  const auto dir = e2e::scratch("lock_killed");
  e2e::write(dir, "slow.yaml", series("slow", 30));
  const auto mark = "EXPR_TEST_MARK=lock_killed_" + std::to_string(::getpid());
  auto killed = e2e::start(dir, "run slow.yaml --out run", mark);
  REQUIRE(e2e::eventually([&] { return fs::exists(dir / "run" / "experiments" / "slow"); }, 60s));
  ::kill(killed.pid, SIGKILL);
  killed.wait(10s);
  // The workers hold the lock too (they write into the directory) until they are gone as well.
  REQUIRE(e2e::eventually([&] { return e2e::processes_with(mark).empty(); }, 5s));
  e2e::write(dir, "quick.yaml", series("quick"));
  const auto o = e2e::expr(dir, "run quick.yaml --out run --force");
  INFO(o.all());
  CHECK(o.exit_code == 0);
}
