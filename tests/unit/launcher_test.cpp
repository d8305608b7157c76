// The process that forks a run's workers (runner/launcher.hpp): a worker it forks runs the job its
// description names, with what the launcher was forked with, and is the parent's own child in a
// group of its own, so the pool waits for it, stops it and reads how it ended as for a worker it
// forked itself. A launcher that dies leaves the run to fork its workers itself. A worker started
// ahead of its job hears the job from the parent and takes on the job's name, log and clock.
#include <doctest/doctest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/launcher.hpp"
#include "trace/clock.hpp"
#include "util/log.hpp"

namespace fs = std::filesystem;
using namespace expr::runner;

namespace {

// Jobs known when the launcher is forked: what a worker is asked to do is an index into them.
Launcher::Jobs numbered(const std::vector<std::string>& words) {
  return [words](const nlohmann::json& description) -> std::function<void(Channel&)> {
    const auto word = words.at(description.at("word").get<std::size_t>());
    if (word == "crash") return [](Channel&) { ::raise(SIGSEGV); };
    if (word == "hang") return [](Channel&) { ::pause(); };
    if (word == "ahead")
      return [](Channel& channel) {
        channel.send({{"type", "ready"}});
        channel.send({{"type", "result"}, {"word", read_from_parent()}});
      };
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

TEST_CASE("a worker started ahead of its job takes on the job the parent tells it, with the job's name, log and clock") {
  Launcher launcher(numbered({"ahead"}));
  REQUIRE(launcher.running());
  WorkerPool pool;
  pool.launch_through(&launcher);
  bool ready = false;
  auto ahead = options("ahead", 0, 0.2);  // a timeout it would miss if its clock did not start again
  ahead.on_message = [&ready](const nlohmann::json& m) { ready = ready || m.value("type", "") == "ready"; };
  ahead.on_exit = [](WorkerExit) { FAIL("the ahead options' on_exit ran for the job"); };
  const auto ahead_log = ahead.log_file;
  const int worker = pool.start([](Channel&) { ::_exit(42); }, std::move(ahead));
  while (!ready) pool.wait();
  ::usleep(300000);  // past the first timeout: the worker lives on only if reassign restarts the clock

  std::optional<WorkerExit> exit;
  auto job = options("the job", 0, 30);
  const auto job_log = job.log_file;
  job.on_exit = [&exit](WorkerExit e) { exit = std::move(e); };
  const auto reassigned = expr::trace::now();
  pool.reassign(worker, std::move(job));
  pool.tell(worker, "the job's description");
  while (pool.running() > 0) pool.wait();
  REQUIRE(exit);
  REQUIRE(exit->result);
  CHECK(exit->how == WorkerExit::How::finished);
  CHECK(exit->result->at("word") == "the job's description");
  CHECK(exit->spawned >= reassigned);
  CHECK(fs::exists(job_log));
  fs::remove(ahead_log);
  fs::remove(job_log);
}

TEST_CASE("a worker started ahead and not needed is killed and ends as stopped") {
  Launcher launcher(numbered({"ahead"}));
  WorkerPool pool;
  pool.launch_through(&launcher);
  bool ready = false;
  std::optional<WorkerExit> exit;
  auto ahead = options("unneeded", 0);
  ahead.on_message = [&ready](const nlohmann::json& m) { ready = ready || m.value("type", "") == "ready"; };
  ahead.on_exit = [&exit](WorkerExit e) { exit = std::move(e); };
  const auto log = ahead.log_file;
  const int worker = pool.start([](Channel&) { ::_exit(42); }, std::move(ahead));
  while (!ready) pool.wait();
  pool.kill(worker);
  pool.tell(worker, "too late");  // a worker being killed does not take the parent down with SIGPIPE
  while (pool.running() > 0) pool.wait();
  REQUIRE(exit);
  CHECK(exit->how == WorkerExit::How::stopped);
  CHECK(!exit->result);
  fs::remove(log);
}

TEST_CASE("a worker's pipes survive the parent's log file having had their descriptor numbers") {
  // The launcher closes the parent's files, so their numbers are free for the pipe ends it receives
  // (4, 5 and 6: messages, output, commands), while the logger still holds expr.log by its old
  // number; a worker taking its own logger must not close that number again.
  const auto log_file = fs::temp_directory_path() / ("expr-launcher-test-" + std::to_string(::getpid()) + "-expr.log");
  for (const int number : {4, 5, 6}) {
    CAPTURE(number);
    // The log opened at `number`: every lower free number is taken first, and given back after. A
    // descriptor this process inherited there (`flock FILE ctest` leaves its lock's open) is
    // closed first: it is nothing of the test's, and the number must be the log's.
    ::close(number);
    std::vector<int> fillers;
    int fd;
    while ((fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) < number) fillers.push_back(fd);
    ::close(fd);
    REQUIRE(fd == number);
    expr::log::open_file(log_file);
    for (const int filler : fillers) ::close(filler);
    REQUIRE(::fcntl(number, F_GETFD) >= 0);

    Launcher launcher(numbered({"ahead"}));
    WorkerPool pool;
    pool.launch_through(&launcher);
    bool ready = false;
    std::optional<WorkerExit> exit;
    auto o = options("pipes", 0, 30);
    o.on_message = [&ready](const nlohmann::json& m) { ready = ready || m.value("type", "") == "ready"; };
    o.on_exit = [&exit](WorkerExit e) { exit = std::move(e); };
    const auto log = o.log_file;
    const int worker = pool.start([](Channel&) { ::_exit(42); }, std::move(o));
    while (!ready && pool.running() > 0) pool.wait();
    pool.tell(worker, "heard");
    while (pool.running() > 0) pool.wait();
    REQUIRE(exit);
    REQUIRE(exit->result);
    CHECK(exit->result->at("word") == "heard");
    fs::remove(log);
  }
  fs::remove(log_file);
}
