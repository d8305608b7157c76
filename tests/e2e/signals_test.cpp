// Signals to `expr run` and the death of expr itself: Ctrl-C (SIGINT) and SIGTERM stop the run,
// keep every result already measured, mark the rest "interrupted" and exit with 128 + the signal;
// kill -9 of expr takes its workers, and whatever they started, with it. Each case signals the real
// binary while a real worker is in the middle of an experiment, in timing or hung, and then looks
// in /proc for any process left with the test's mark in its environment. `expr run --resume` then
// finishes an interrupted run.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// first: finishes before the signal. second: in the middle when it comes; `busy` times a
// sleeper for 20 s, `hung` hangs in its warm-up after starting a helper process. last: never starts.
// One timing round each: with more, first's later rounds would wait until after second
// (runner/series_runner.cpp), and first would not be finished when the signal comes.
std::string series(const std::string& second) {
  const std::string busy = R"(  - name: second
    plugin: sleeper
    params: {base_us: 20000}
    iterations: {min_time: 20s, max_time: 20s}
)";
  const std::string hung = R"(  - name: second
    plugin: faulty
    params: {fault: spawn_and_hang}
)";
  return R"(series: signals
defaults:
  device: cpu
  timeout: 60
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1, rounds: 1}
experiments:
  - name: first
    plugin: faulty
)" + (second == "busy" ? busy : hung) +
         R"(  - name: last
    plugin: faulty
)";
}

struct Scenario {
  e2e::Background expr;
  std::string mark;  // EXPR_TEST_MARK=..., in the environment of expr and everything it starts
};

// Whether `second`'s helper, the one process that runs /bin/sleep, has started: how many other
// processes carry the mark (expr, the process that forks its workers, the worker) is expr's business.
bool helper_started(const std::string& mark) {
  for (const auto pid : e2e::processes_with(mark)) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    if (std::getline(comm, name) && name == "sleep") return true;
  }
  return false;
}

// Starts the series and returns once `second` is in the middle: busy timing (expr's progress line
// says so), hung asleep in its warm-up with its helper started. Waited for, not slept for: on a
// loaded machine the warm-up can take longer than any fixed pause.
Scenario start_and_wait(const std::string& name, const std::string& second) {
  const auto dir = e2e::scratch("signals_" + name);
  e2e::write(dir, "series.yaml", series(second));
  const auto mark = "EXPR_TEST_MARK=signals_" + name + "_" + std::to_string(::getpid());
  auto expr = e2e::start(dir, "run series.yaml --out run", mark);
  const bool in_the_middle = e2e::eventually(
      [&] {
        if (second == "hung") return helper_started(mark);
        std::ifstream progress(dir / "stderr.txt");
        const std::string text((std::istreambuf_iterator<char>(progress)), {});
        return text.find("second on cpu: timing host") != std::string::npos;
      },
      60s);
  REQUIRE(in_the_middle);
  return {expr, mark};
}

void check_first_kept(const nlohmann::json& results) {
  const auto& first = e2e::experiment(results, "first");
  CHECK(first.at("status") == "ok");
  CHECK(first.at("timing").at("host").at("count").get<int>() >= 3);
  CHECK(e2e::guess(first, "ranges(\"^sum$\") == 1").at("verdict") == "confirmed");
}

}  // namespace

TEST_CASE("Ctrl-C or SIGTERM stops the run: finished results kept, the rest interrupted, no process left") {
  for (const auto& sent : {std::pair{SIGINT, "SIGINT"}, std::pair{SIGTERM, "SIGTERM"}}) {
    const int signal = sent.first;
    const char* const signal_name = sent.second;  // not a structured binding: CAPTURE takes it into a lambda
    for (const std::string second : {"busy", "hung"}) {
      CAPTURE(signal_name);
      CAPTURE(second);
      auto s = start_and_wait(std::string(signal_name) + "_" + second, second);
      ::kill(s.expr.pid, signal);
      const auto o = s.expr.wait(60s);
      INFO(o.all());
      CHECK(o.exit_code == 128 + signal);
      CHECK(o.err.find(std::string("interrupted (") + signal_name + "): 2 of 3 experiments did not finish") != std::string::npos);
      CHECK(e2e::processes_with(s.mark).empty());

      const auto run = s.expr.dir / "run";
      const auto results = e2e::read_json(run / "results.json");
      CHECK(results.at("interrupted") == signal_name);
      CHECK(results.at("summary").at("experiments_interrupted") == 2);
      check_first_kept(results);
      const auto& stopped = e2e::experiment(results, "second");
      CHECK(stopped.at("status") == "interrupted");
      const auto reason = stopped.at("reason").get<std::string>();
      if (second == "busy") {
        // It stopped itself between two timed calls and kept its first call.
        CHECK(reason == "timing: stopped when the run was interrupted; what was measured before is kept");
        CHECK(stopped.at("timing").contains("first_call_ns"));
      } else {
        CHECK(reason == "killed during warm-up when the run was interrupted: it did not stop within 3 s");
      }
      const auto& last = e2e::experiment(results, "last");
      CHECK(last.at("status") == "interrupted");
      CHECK(last.at("reason") == "not started: the run was interrupted");
      CHECK(fs::exists(run / "summary.md"));
      CHECK(fs::exists(run / "junit.xml"));

      const auto shown = e2e::expr(s.expr.dir, "show run");
      CHECK(shown.out.find(std::string("incomplete: the run was interrupted (") + signal_name +
                           "); 2 of 3 planned experiments did not finish") != std::string::npos);
    }
  }
}

TEST_CASE("a second Ctrl-C kills the workers at once") {
  auto s = start_and_wait("twice", "hung");
  ::kill(s.expr.pid, SIGINT);
  std::this_thread::sleep_for(200ms);
  ::kill(s.expr.pid, SIGINT);
  const auto o = s.expr.wait(60s);
  INFO(o.all());
  CHECK(o.exit_code == 130);
  CHECK(e2e::processes_with(s.mark).empty());
  const auto results = e2e::read_json(s.expr.dir / "run" / "results.json");
  check_first_kept(results);
  CHECK(e2e::experiment(results, "second").at("reason") == "killed during warm-up: the run was interrupted a second time");
}

TEST_CASE("kill -9 of expr takes its workers and what they started with it, and keeps the finished results") {
  for (const std::string second : {"busy", "hung"}) {
    CAPTURE(second);
    auto s = start_and_wait("kill_" + second, second);
    CHECK(e2e::processes_with(s.mark).size() >= (second == "hung" ? 3u : 2u));  // expr, the worker (and its helper), the launcher
    ::kill(s.expr.pid, SIGKILL);
    const auto o = s.expr.wait(10s);
    CHECK(o.exit_code == 128 + SIGKILL);
    // The kernel tells each worker that its parent died; the worker then ends its process group.
    CHECK(e2e::eventually([&] { return e2e::processes_with(s.mark).empty(); }, 5s));
    const auto results = e2e::read_run(s.expr.dir / "run");
    check_first_kept(results);
    CHECK_FALSE(results.contains("interrupted"));
    const auto shown = e2e::expr(s.expr.dir, "show run");
    CHECK(shown.out.find("incomplete: the run has not ended; 1 of 3 planned experiments have a result") != std::string::npos);
  }
}

TEST_CASE("--resume of a run stopped by Ctrl-C finishes it, keeping what finished, and holds the directory's lock meanwhile") {
  auto s = start_and_wait("resume", "busy");
  ::kill(s.expr.pid, SIGINT);
  const auto stopped = s.expr.wait(60s);
  INFO(stopped.all());
  REQUIRE(stopped.exit_code == 128 + SIGINT);
  const auto run = s.expr.dir / "run";
  const auto before = e2e::read_json(run / "results.json");
  REQUIRE(before.at("interrupted") == "SIGINT");
  const auto shown = e2e::expr(s.expr.dir, "show run");
  CHECK(shown.out.find(" run --resume run\n") != std::string::npos);

  // The resumed run reruns the interrupted points; while it does, the directory is locked.
  auto resumed = e2e::start(s.expr.dir, "run --resume run", s.mark);
  const bool timing = e2e::eventually(
      [&] {
        std::ifstream progress(s.expr.dir / "stderr.txt");
        const std::string text((std::istreambuf_iterator<char>(progress)), {});
        return text.find("second on cpu: warm-up") != std::string::npos;
      },
      60s);
  CHECK(timing);
  const auto elsewhere = s.expr.dir / "elsewhere";
  fs::create_directories(elsewhere);
  const auto refused = e2e::expr(elsewhere, "run --resume ../run");
  CHECK(refused.exit_code == 4);
  CHECK(refused.err.find("another expr run is writing this run directory") != std::string::npos);

  const auto o = resumed.wait(120s);
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(o.err.find("resuming run: 1 of 3 experiments have a result; running the other 2") != std::string::npos);
  CHECK(e2e::processes_with(s.mark).empty());
  const auto after = e2e::read_json(run / "results.json");
  CHECK_FALSE(after.contains("interrupted"));
  CHECK(after.at("finished") != "");
  CHECK(after.at("resumed").size() == 1);
  CHECK(after.at("summary").at("experiments_interrupted") == 0);
  check_first_kept(after);
  CHECK(e2e::experiment(after, "first") == e2e::experiment(before, "first"));
  CHECK(e2e::experiment(after, "second").at("status") == "ok");
  CHECK(e2e::experiment(after, "last").at("status") == "ok");
  CHECK(e2e::expr(s.expr.dir, "show run").out.find("incomplete") == std::string::npos);
}
