// Resumable runs: a sweep whose expr is killed with SIGKILL between points keeps every point that
// finished, `expr show` says how to resume it, and `expr run --resume` runs only the points without
// a result; a series that changed a finished point is refused.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using e2e::has;

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// When a step of an experiment's worker began (results.json "timeline").
std::int64_t mark(const json& experiment, const std::string& step) {
  for (const auto& m : experiment.at("timeline"))
    if (m.at("step") == step) return m.at("at_ns");
  throw std::runtime_error("no step " + step + " in the timeline of " + experiment.at("name").get<std::string>());
}

// Each point sleeps 400 ms in setup, so the test can stop the run between points.
const std::string series = R"(series: resume
defaults:
  device: cpu
  params: {setup_ms: 400}
  # 40 samples: the median's 95% interval then leaves out the calls a loaded machine preempted (with 3 to 15 it spanned them)
  iterations: {warmup: 0, traced: 1, min_samples: 40, min_time: 0.001, max_time: 1}
  axes:
    size: [1024, 2048, 3072]
experiments:
  - name: slow
    plugin: sleeper
    params: {base_us: 400}
    expect:
      - host_time > fast.host_time
    sweep_expect:
      - monotonic(host_time, size, increasing)
  - name: fast
    plugin: sleeper
    params: {base_us: 20}
)";

const std::vector<std::string> points{"slow[size=1024]", "slow[size=2048]", "slow[size=3072]",
                                      "fast[size=1024]", "fast[size=2048]", "fast[size=3072]"};

// The points of a results.json that ran to a result, by name.
std::map<std::string, json> with_result(const json& results) {
  std::map<std::string, json> out;
  for (const auto& e : results.at("experiments"))
    if (e.at("status") != "skipped") out[e.at("name")] = e;
  return out;
}

json without_guesses(json experiment) {
  experiment.erase("guesses");
  return experiment;
}

// The files a finished point left, with their contents and times, to show they were not touched.
// A point's files, by name: its folder under experiments/ and its Chrome trace under traces/.
std::map<std::string, std::pair<std::string, fs::file_time_type>> files_of(const fs::path& run, const std::string& point) {
  std::map<std::string, std::pair<std::string, fs::file_time_type>> out;
  for (const auto& folder : {run / "experiments" / point, run / "traces" / point})
    if (fs::is_directory(folder))
      for (const auto& f : fs::directory_iterator(folder)) out[f.path().filename().string()] = {slurp(f.path()), fs::last_write_time(f.path())};
  return out;
}

}  // namespace

TEST_CASE("after kill -9 of expr mid-sweep, --resume runs only the points without a result and keeps the others as they were") {
  const auto dir = e2e::scratch("resume_kill");
  e2e::write(dir, "series.yaml", series);
  const auto run = dir / "run";

  // Workers orphaned by the kill are handed to this process, so the test can wait for them.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  const pid_t pid = e2e::start(dir, "run series.yaml --out run").pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::size_t finished = 0;
  while (finished < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fs::exists(run / "results.json")) finished = with_result(e2e::read_run(run)).size();
  }
  REQUIRE(finished >= 2);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  const auto killed_at = monotonic_ns();
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  // A worker in flight outlives its parent until it next writes to it (it then dies of SIGPIPE);
  // it must be gone before the point runs again into the same folder.
  int orphans = 0;
  while (::waitpid(-1, &status, 0) > 0) ++orphans;
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  INFO("orphaned workers reaped: " << orphans);

  // What was on disk the moment expr died: every finished point, whole, in the journal that
  // results.json is read with (results.json itself is written whole at the run's end only).
  CHECK(fs::exists(run / "experiments.jsonl"));
  const auto before = e2e::read_run(run);
  CHECK(before.at("finished") == "");
  CHECK(before.at("planned") == 6);
  const auto kept = with_result(before);
  REQUIRE(kept.size() >= 2);
  REQUIRE(kept.size() < points.size());
  std::map<std::string, std::map<std::string, std::pair<std::string, fs::file_time_type>>> files;
  for (const auto& [name, e] : kept) {
    CHECK(e.at("status") == "ok");
    CHECK(mark(e, "ended") < killed_at);
    files[name] = files_of(run, name);
    CHECK(files[name].count("worker.log"));
    CHECK(files[name].count("expr_trace.json"));
    CHECK(files[name].count("expr.pt.trace.json"));
  }

  const auto show = e2e::expr(dir, "show run");
  INFO(show.all());
  CHECK(show.exit_code == 0);
  CHECK(has(show.out, "incomplete: the run has not ended; " + std::to_string(kept.size()) + " of 6 planned experiments have a result"));
  CHECK(has(show.out, std::string(EXPR_BINARY) + " run --resume run\n"));

  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // file times would show a rewrite
  const auto resumed = e2e::expr(dir, "run --resume run");
  INFO(resumed.all());
  CHECK(resumed.exit_code == 0);
  CHECK(has(resumed.err, "resuming run: " + std::to_string(kept.size()) + " of 6 experiments have a result; running the other " +
                             std::to_string(6 - kept.size())));

  const auto after = e2e::read_json(run / "results.json");
  CHECK(!fs::exists(run / "experiments.jsonl"));  // results.json holds every experiment now
  CHECK(after.at("run").at("id") == before.at("run").at("id"));
  CHECK(after.at("started") == before.at("started"));
  CHECK(after.at("finished") != "");
  CHECK(after.at("resumed").size() == 1);
  const auto all = with_result(after);
  REQUIRE(all.size() == points.size());
  for (const auto& name : points) {
    INFO(name);
    const auto& e = all.at(name);
    CHECK(e.at("status") == "ok");
    if (const auto old = kept.find(name); old != kept.end()) {
      // Kept exactly: its measurement, timeline and files; it did not run again.
      CHECK(without_guesses(e) == without_guesses(old->second));
      CHECK(files_of(run, name) == files[name]);
      CHECK(!has(resumed.err, "] " + name + ":"));
    } else {
      CHECK(mark(e, "spawned") > killed_at);  // ran in the resumed run, once
      CHECK(has(resumed.err, "] " + name + ": ok"));
    }
  }
  // Guesses that read points missing at the kill are judged now, over old and new points alike.
  for (const auto& size : {"1024", "2048", "3072"})
    CHECK(e2e::guess(all.at(std::string("slow[size=") + size + "]"), "host_time > fast.host_time").at("verdict") == "confirmed");
  REQUIRE(after.at("sweep_guesses").size() == 1);
  CHECK(after.at("sweep_guesses")[0].at("verdict") == "confirmed");
  CHECK(has(resumed.out, "Guess vs trace: "));

  // Finished now: show no longer offers to resume.
  CHECK(!has(e2e::expr(dir, "show run").out, "incomplete"));
}

TEST_CASE("--resume refuses a series that changed a finished point, and leaves the run as it was") {
  const auto dir = e2e::scratch("resume_changed");
  const std::string first = R"(series: changed
defaults:
  device: cpu
  iterations: {warmup: 0, traced: 1, min_samples: 3, min_time: 0.001, max_time: 0.05}
experiments:
  - name: s
    plugin: sleeper
    params: {k: 1}
    axes: {size: [1024, 2048]}
)";
  e2e::write(dir, "series.yaml", first);
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  const auto recorded = slurp(dir / "run" / "results.json");

  SUBCASE("a parameter") {
    auto text = first;
    text.replace(text.find("{k: 1}"), 6, "{k: 2}");
    e2e::write(dir, "series.yaml", text);
    const auto r = e2e::expr(dir, "run --resume run");
    INFO(r.all());
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "series.yaml:6:11: error: 2 points finished with other settings: params.k was 1.0, now 2.0 (s[size=1024], "
                     "s[size=2048])\n"));
    CHECK(has(r.err, "error: cannot resume run: the series " + (dir / "series.yaml").string() + " changed 2 finished points; "));
  }
  SUBCASE("an axis value, so a finished point's identity") {
    auto text = first;
    text.replace(text.find("[1024, 2048]"), 12, "[2048, 4096]");
    e2e::write(dir, "series.yaml", text);
    const auto r = e2e::expr(dir, "run --resume run");
    INFO(r.all());
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "series.yaml:6:11: error: s[size=1024] finished in this run, but the series no longer plans it\n"));
    CHECK(has(r.err, "changed 1 finished point; "));
  }
  SUBCASE("the iterations") {
    auto text = first;
    text.replace(text.find("max_time: 0.05"), 14, "max_time: 0.06");
    e2e::write(dir, "series.yaml", text);
    const auto r = e2e::expr(dir, "run --resume run");
    INFO(r.all());
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "2 points finished with other settings: iterations.max_time_s was 0.05, now 0.06 (s[size=1024], s[size=2048])\n"));
  }
  CHECK(slurp(dir / "run" / "results.json") == recorded);
}

TEST_CASE("--resume of a run whose series gained a point runs only that point, and judges changed guesses again") {
  const auto dir = e2e::scratch("resume_grown");
  const std::string first = R"(series: grown
defaults:
  device: cpu
  iterations: {warmup: 0, traced: 1, min_samples: 3, min_time: 0.001, max_time: 0.05}
experiments:
  - name: s
    plugin: sleeper
    axes: {size: [1024, 2048]}
)";
  e2e::write(dir, "series.yaml", first);
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  const auto before = with_result(e2e::read_json(dir / "run" / "results.json"));
  // Each step of the worker, in order, on one clock with the parent's.
  std::vector<std::string> steps;
  std::int64_t last = 0;
  for (const auto& m : before.at("s[size=1024]").at("timeline")) {
    steps.push_back(m.at("step"));
    CHECK(m.at("at_ns").get<std::int64_t>() >= last);
    last = m.at("at_ns");
  }
  CHECK(steps == std::vector<std::string>{"spawned", "worker", "setup", "plugin setup", "first call", "verify", "quiet", "warm-up",
                                          "timing", "tracing", "teardown", "result", "ended"});

  auto text = first;
  text.replace(text.find("[1024, 2048]"), 12, "[1024, 2048, 4096]");
  text += "    expect: [host_time < 1s]\n";
  e2e::write(dir, "series.yaml", text);
  const auto dry = e2e::expr(dir, "run --resume run --dry-run");
  INFO(dry.all());
  CHECK(dry.exit_code == 0);
  CHECK(dry.out == "  s[size=4096]\n1 of 3 experiments to run\n");

  const auto r = e2e::expr(dir, "run --resume run");
  INFO(r.all());
  CHECK(r.exit_code == 0);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  const auto after = with_result(results);
  REQUIRE(after.size() == 3);
  for (const auto& name : {"s[size=1024]", "s[size=2048]"}) CHECK(without_guesses(after.at(name)) == without_guesses(before.at(name)));
  CHECK(mark(after.at("s[size=4096]"), "spawned") > mark(before.at("s[size=2048]"), "ended"));
  for (const auto& [name, e] : after) CHECK(e2e::guess(e, "host_time < 1s").at("verdict") == "confirmed");
  CHECK(results.at("planned") == 3);
  CHECK(slurp(dir / "run" / "series.yaml") == text);  // the series the verdicts come from
}

TEST_CASE("--resume of a directory that is no resumable run says why") {
  const auto dir = e2e::scratch("resume_nothing");
  const auto o = e2e::expr(dir, "run --resume nowhere");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "error: cannot resume nowhere: nowhere/plan.json: missing; only runs started by an expr that writes it can be resumed\n"));
  const auto both = e2e::expr(dir, "run --resume nowhere --axis size=1");
  CHECK(both.exit_code == 2);
  CHECK(has(both.err, "--axis excludes --resume"));
}
