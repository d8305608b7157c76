// The process that forks a run's workers (runner/launcher.hpp): a worker it forks runs the job its
// description names, with what the launcher was forked with, and is the parent's own child in a
// group of its own, so the pool waits for it, stops it and reads how it ended as for a worker it
// forked itself. A launcher that dies leaves the run to fork its workers itself.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/launcher.hpp"

namespace fs = std::filesystem;
using namespace expr::runner;

namespace {

// Jobs known when the launcher is forked: what a worker is asked to do is an index into them.
Launcher::Jobs numbered(const std::vector<std::string>& words) {
  return [words](const nlohmann::json& description) -> std::function<void(Channel&)> {
    const auto word = words.at(description.at("word").get<std::size_t>());
    if (word == "crash") return [](Channel&) { ::raise(SIGSEGV); };
    if (word == "hang") return [](Channel&) { ::pause(); };
    return [word](Channel& channel) { channel.send({{"type", "result"}, {"word", word}, {"parent", ::getppid()}, {"group", ::getpgrp()}}); };
  };
}

WorkerOptions options(const std::string& name, std::size_t word, double timeout = 0) {
  WorkerOptions o;
  o.name = name;
  o.timeout_seconds = timeout;
  o.log_file = fs::temp_directory_path() / ("expr-launcher-test-" + std::to_string(::getpid()) + "-" + name + ".log");
  o.description = {{"word", word}};
  return o;
}

}  // namespace

TEST_CASE("a worker forked by the launcher runs the job its description names, as the parent's child in a group of its own") {
  // Words added after the launcher was forked are not its to know: it runs what it was forked with.
  std::vector<std::string> words{"first", "crash", "hang"};
  Launcher launcher(numbered(words));
  REQUIRE(launcher.running());
  words.push_back("added later");

  std::vector<WorkerExit> exits;
  WorkerPool pool;
  pool.launch_through(&launcher);
  for (const auto& [name, word, timeout] : std::vector<std::tuple<std::string, std::size_t, double>>{{"first", 0, 0}, {"crash", 1, 0}, {"hang", 2, 0.3}}) {
    auto o = options(name, word, timeout);
    o.on_exit = [&exits](WorkerExit e) { exits.push_back(std::move(e)); };
    // The job given here is the parent's own; the launcher's is the one that runs.
    pool.start([](Channel&) { ::_exit(42); }, std::move(o));
  }
  while (pool.running() > 0) pool.wait();
  REQUIRE(exits.size() == 3);
  std::sort(exits.begin(), exits.end(), [](const auto& a, const auto& b) { return a.spawned < b.spawned; });
  REQUIRE(exits[0].result);
  CHECK(exits[0].result->at("word") == "first");
  CHECK(exits[0].result->at("parent").get<pid_t>() == ::getpid());
  CHECK(exits[0].result->at("group").get<pid_t>() != ::getpgrp());
  CHECK(exits[1].how == WorkerExit::How::crashed);
  CHECK(exits[1].signal == SIGSEGV);
  CHECK(exits[2].how == WorkerExit::How::timed_out);
  for (const char* name : {"first", "crash", "hang"}) fs::remove(options(name, 0).log_file);
}

TEST_CASE("when the launcher dies, the parent forks the workers itself and the run goes on") {
  Launcher launcher(numbered({"first"}));
  REQUIRE(launcher.running());
  ::kill(launcher.pid(), SIGKILL);
  WorkerPool pool;
  pool.launch_through(&launcher);
  std::optional<WorkerExit> exit;
  auto o = options("fallback", 0);
  const auto log = o.log_file;
  o.on_exit = [&exit](WorkerExit e) { exit = std::move(e); };
  pool.start([](Channel& channel) { channel.send({{"type", "result"}, {"word", "forked by the parent"}}); }, std::move(o));
  while (pool.running() > 0) pool.wait();
  REQUIRE(exit);
  REQUIRE(exit->result);
  CHECK(exit->result->at("word") == "forked by the parent");
  CHECK(!launcher.running());
  fs::remove(log);
}
