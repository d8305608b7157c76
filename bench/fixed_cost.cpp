// Where the wall time of a run goes, and the fixed cost of one experiment against its floor.
//
//   expr_bench_fixed_cost SERIES [--rounds N] [--out RUN_DIR] [--expr PATH]
//
// In one call, on one machine:
//  1. the floor, N times with no other context on the device, then N times beside one held by
//     another process, as `expr run` holds one while it runs (runner/context_keeper.hpp): a bare
//     worker forked the way the runner forks its workers (runner/worker.hpp), from this process,
//     which has loaded the series' plugin libraries the way `expr run` does (planning the series
//     opens them through the loader); the worker only creates the device's CUDA context
//     (cudaSetDevice, as an experiment's worker does) and exits. The floor is fork to context ready;
//  2. `expr run SERIES --out RUN_DIR` (default runs/fixed-cost), timed from outside;
//  3. the floor beside a held context N times again, so that drift over the run shows;
//  4. from RUN_DIR/results.json, each worker's timeline (outcome::Mark): the fixed cost of each
//     experiment (its worker forked to its first call) and its parts, against the floor; and the
//     run's wall time against the sum of its timed and traced phases.
// Without a GPU the floor cannot be measured; the rest is still reported.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "device/cuda.hpp"
#include "loader/plugin_library.hpp"
#include "runner/context_keeper.hpp"
#include "runner/worker.hpp"
#include "series/plan.hpp"
#include "trace/clock.hpp"

using namespace expr;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Summary {
  double median = 0, min = 0, max = 0, total = 0;
  std::size_t count = 0;
};

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = v.size();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.min = v.front();
  s.max = v.back();
  for (double x : v) s.total += x;
  return s;
}

std::string seconds(double ns) { return ns >= 1e9 ? fmt::format("{:.2f} s", ns * 1e-9) : fmt::format("{:.1f} ms", ns * 1e-6); }
std::string range(const Summary& s) { return fmt::format("{} [{} .. {}]", seconds(s.median), seconds(s.min), seconds(s.max)); }

// One bare worker: fork, create the CUDA context, report when it was ready. Empty with the reason
// when there is no context to be had (no GPU).
struct FloorSample {
  double context_ns = 0;  // fork to context ready
  double reaped_ns = 0;   // fork to ended (WorkerExit::ended)
};
std::variant<FloorSample, std::string> floor_sample() {
  std::string error;
  runner::WorkerOptions options;
  options.timeout_seconds = 60;
  options.log_file = fs::temp_directory_path() / fmt::format("expr-bench-floor-{}.log", ::getpid());
  options.on_message = [&error](const json& m) {
    if (m.value("type", "") == "error") error = m.value("message", "");
  };
  const auto exit = runner::run_in_worker(
      [](runner::Channel& channel) {
        cuda::select(0);
        channel.send({{"type", "result"}, {"context_ready_ns", trace::now()}});
      },
      options);
  std::error_code ec;
  fs::remove(options.log_file, ec);
  if (!exit.result) return fmt::format("the bare worker {}{}", exit.describe(), error.empty() ? "" : ": " + error);
  return FloorSample{static_cast<double>(exit.result->at("context_ready_ns").get<std::int64_t>() - exit.spawned),
                     static_cast<double>(exit.ended - exit.spawned)};
}

struct Floor {
  std::vector<double> context, reaped;
  std::string unavailable;
};
void measure_floor(Floor& floor, int rounds) {
  for (int i = 0; i < rounds && floor.unavailable.empty(); ++i) {
    auto s = floor_sample();
    if (auto* why = std::get_if<std::string>(&s)) {
      floor.unavailable = *why;
      break;
    }
    floor.context.push_back(std::get<FloorSample>(s).context_ns);
    floor.reaped.push_back(std::get<FloorSample>(s).reaped_ns);
  }
}

// Runs `expr run SERIES --out DIR`, its output in DIR.log; returns its exit status and when it
// started and ended.
struct ExprRun {
  int status = -1;
  trace::Ns started = 0, ended = 0;
};
ExprRun run_expr(const fs::path& expr, const fs::path& series, const fs::path& out) {
  const auto log = out.string() + ".log";
  ExprRun r;
  r.started = trace::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen(log.c_str(), "w", stdout) || ::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) ::_exit(127);
    ::execl(expr.c_str(), expr.c_str(), "run", series.c_str(), "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.ended = trace::now();
  r.status = pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A worker's steps from results.json: each step's start, in order.
using Timeline = std::vector<std::pair<std::string, trace::Ns>>;
Timeline timeline_of(const json& experiment) {
  Timeline t;
  for (const auto& m : experiment.value("timeline", json::array())) t.emplace_back(m.at("step"), m.at("at_ns"));
  return t;
}
std::optional<trace::Ns> at(const Timeline& t, const std::string& step) {
  for (const auto& [name, ns] : t)
    if (name == step) return ns;
  return std::nullopt;
}

// Each step's duration (to the next step), by step, in the order steps first appear.
struct Steps {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> durations;
  void add(const Timeline& t, const std::string& prefix) {
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      const auto name = prefix + t[i].first;
      if (!durations.count(name)) order.push_back(name);
      durations[name].push_back(static_cast<double>(t[i + 1].second - t[i].second));
    }
  }
};

// What each step is, for the report.
std::string meaning(const std::string& step) {
  static const std::map<std::string, std::string> m{
      {"spawned", "fork, until the worker runs"},
      {"worker", "worker starts the experiment"},
      {"setup", "setup begins"},
      {"cuda context", "CUDA context (cudaSetDevice)"},
      {"device queries", "device queries (versions, properties)"},
      {"plugin setup", "plugin setup (framework init, inputs)"},
      {"first call", "first call"},
      {"verify", "verify"},
      {"quiet", "held until the worker started ahead has its context"},
      {"warm-up", "warm-up"},
      {"timing", "timing (host and device)"},
      {"tracing", "tracing"},
      {"counters", "counters (hardware counters, where on)"},
      {"teardown", "teardown"},
      {"result", "result sent, until the parent has it and the pipe is closed"},
  };
  const bool cold = step.starts_with("cold: ");
  const auto it = m.find(cold ? step.substr(6) : step);
  return (cold ? "cold trace worker: " : "") + (it == m.end() ? step : it->second);
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<fs::path> series_file;
  fs::path out = "runs/fixed-cost";
  int rounds = 10;
  std::error_code ec;
  fs::path expr = fs::read_symlink("/proc/self/exe", ec).parent_path() / "expr";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--expr" && i + 1 < argc) expr = argv[++i];
    else if (!a.starts_with("--") && !series_file) series_file = a;
    else {
      fmt::print(stderr, "usage: expr_bench_fixed_cost SERIES [--rounds N] [--out RUN_DIR] [--expr PATH]\n");
      return 2;
    }
  }
  if (!series_file) {
    fmt::print(stderr, "usage: expr_bench_fixed_cost SERIES [--rounds N] [--out RUN_DIR] [--expr PATH]\n");
    return 2;
  }

  // The series' plugins, opened as `expr run` opens them before its first worker.
  try {
    const auto s = series::read(*series_file);
    loader::PluginCatalog catalog(loader::search_path(s.plugin_path, loader::Origin::plugin_path));
    const auto plan = series::plan(s, catalog);
    fmt::print("{}: {} experiments; plugins loaded in this process as expr loads them\n", series_file->string(), plan.experiments.size());
  } catch (const util::InputError& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "{}\n", p.str());
    return 2;
  }

  // The floor is measured as the run's workers meet the device: beside the context that expr run
  // holds on it while it runs (runner/context_keeper.hpp). Once more without, for what that saves.
  Floor alone, before, after;
  measure_floor(alone, rounds);
  if (alone.unavailable.empty()) {
    const runner::ContextKeeper keeper(-1);
    measure_floor(before, rounds);
  }
  const auto run = run_expr(expr, *series_file, out);
  if (alone.unavailable.empty()) {
    const runner::ContextKeeper keeper(-1);
    measure_floor(after, rounds);
  }
  if (run.status < 0 || run.status == 127 || run.status == 2 || run.status == 4) {
    fmt::print(stderr, "{} run {} --out {} exited with {}; see {}.log\n", expr.string(), series_file->string(), out.string(), run.status,
               out.string());
    return 1;
  }

  json results;
  try {
    std::ifstream in(out / "results.json");
    results = json::parse(in);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", (out / "results.json").string(), e.what());
    return 1;
  }

  // Every worker of the run (each experiment's, and its cold trace worker's), in the order they ran.
  std::vector<Timeline> workers;
  Steps steps;
  std::vector<double> fixed, timed_and_traced;
  std::size_t experiments = 0, ok = 0;
  for (const auto& e : results.at("experiments")) {
    ++experiments;
    ok += e.at("status") == "ok";
    const auto t = timeline_of(e);
    if (t.empty()) continue;  // skipped: no worker
    workers.push_back(t);
    steps.add(t, "");
    const auto spawned = at(t, "spawned"), first = at(t, "first call");
    if (spawned && first && e.at("status") == "ok") fixed.push_back(static_cast<double>(*first - *spawned));
    // The traced iterations end where the counters phase begins (runs recorded before it: teardown).
    const auto timing = at(t, "timing"), tracing = at(t, "tracing"), counters = at(t, "counters"), teardown = at(t, "teardown");
    const auto traced_end = counters ? counters : teardown;
    if (timing && tracing && traced_end) timed_and_traced.push_back(static_cast<double>(*traced_end - *timing));
    if (e.contains("cold")) {
      const auto c = timeline_of(e.at("cold"));
      if (!c.empty()) {
        workers.push_back(c);
        steps.add(c, "cold: ");
      }
    }
  }
  std::sort(workers.begin(), workers.end(), [](const auto& a, const auto& b) { return a.front().second < b.front().second; });

  const double wall = static_cast<double>(run.ended - run.started);
  fmt::print("`{} run {}`: exit {}, {} experiments ({} ok), {} worker processes, wall time {}\n\n", expr.string(), series_file->string(),
             run.status, experiments, ok, workers.size(), seconds(wall));
  fmt::print("Where the wall time went (steps per worker, medians and sums):\n");
  fmt::print("  {:<54} {:>10} {:>10} {:>6}\n", "step", "median", "sum", "share");
  const auto row = [&](const std::string& what, const Summary& s) {
    fmt::print("  {:<54} {:>10} {:>10} {:>5.1f}%\n", what, seconds(s.median), seconds(s.total), 100 * s.total / wall);
  };
  double accounted = 0;
  if (!workers.empty()) {
    const double start = static_cast<double>(workers.front().front().second - run.started);
    row("expr starts: series, plugins loaded, device probe", summarize({start}));
    accounted += start;
  }
  for (const auto& name : steps.order) {
    const auto s = summarize(steps.durations[name]);
    row(meaning(name), s);
    accounted += s.total;
  }
  std::vector<double> between;  // the parent's own work between one worker's end and the next one's fork
  for (std::size_t i = 0; i + 1 < workers.size(); ++i) between.push_back(static_cast<double>(workers[i + 1].front().second - workers[i].back().second));
  if (!between.empty()) {
    const auto s = summarize(between);
    row("parent between workers (results, reports, traces)", s);
    accounted += s.total;
  }
  if (!workers.empty()) {
    const double end = static_cast<double>(run.ended - workers.back().back().second);
    row("after the last worker (sweep guesses, reports, exit)", summarize({end}));
    accounted += end;
  }
  fmt::print("  {:<54} {:>10} {:>10} {:>5.1f}%\n", "accounted for", "", seconds(accounted), 100 * accounted / wall);
  const auto measured = summarize(timed_and_traced);
  fmt::print("\nTimed and traced phases, summed over {} experiments: {} = {:.3f} of the wall time ({}).\n", measured.count,
             seconds(measured.total), measured.total / wall, seconds(wall));

  const auto fixed_cost = summarize(fixed);
  fmt::print("\nFixed cost per experiment, worker forked to its first call, over {} ok experiments: {}\n", fixed_cost.count,
             range(fixed_cost));
  for (const auto* name : {"spawned", "worker", "setup", "cuda context", "device queries", "plugin setup"})
    if (steps.durations.count(name)) fmt::print("  {:<54} {}\n", meaning(name), range(summarize(steps.durations[name])));
  if (!alone.unavailable.empty()) {
    fmt::print("\nFloor: not measured: {}\n", alone.unavailable);
    return 0;
  }
  std::vector<double> all_floor = before.context;
  all_floor.insert(all_floor.end(), after.context.begin(), after.context.end());
  std::vector<double> all_reaped = before.reaped;
  all_reaped.insert(all_reaped.end(), after.reaped.begin(), after.reaped.end());
  const auto floor = summarize(all_floor);
  fmt::print("\nFloor, a bare worker forked with the plugins loaded, to its CUDA context ready, beside a context held by another "
             "process as during the run, {} workers: {}\n", floor.count, range(floor));
  fmt::print("  with no other context on the device: {}\n", range(summarize(alone.context)));
  fmt::print("  before the run {}; after it {}\n", range(summarize(before.context)), range(summarize(after.context)));
  fmt::print("  the same workers, fork to reaped: {}\n", range(summarize(all_reaped)));
  fmt::print("\nFixed cost / floor (medians): {:.2f} (goal: at most 1.25)\n", fixed_cost.median / floor.median);
  return 0;
}
