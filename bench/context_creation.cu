// How long worker processes take to make their CUDA contexts, one after another and several at
// once. A series-3 run's later rounds each wait, untimed, for the context of the worker started
// ahead of them (docs/timing.md, "Workers started ahead"); whether contexts made at once take
// longer than one alone decides whether one untimed window can make more than one of them.
//
//   expr_bench_context_creation [--at-once K] [--repeats N]
//
// Each condition is repeated N times (default 7), in turn, all of them beside an idle context held
// by another process, as `expr run` holds one (runner/context_keeper.hpp):
//  - "one": one process makes its context (cudaFree(0) on device 0) alone;
//  - "K in a row": K processes, each started when the one before has its context;
//  - "K at once": K processes started together.
// A process keeps its context until the condition ends, as a worker started ahead keeps its own
// while it waits. Printed: the median over the repeats of each condition's wall time, from the
// first process started to the last context made, and of the slowest process's own time.
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// A process that makes its context, writes how long that took (ms, a double) to `report`, and keeps
// it until `hold` is closed.
struct Maker {
  pid_t pid = -1;
  int report = -1, hold = -1;
};

Maker start_maker() {
  int report[2], hold[2];
  if (pipe(report) != 0 || pipe(hold) != 0) std::exit(2);
  const pid_t pid = fork();
  if (pid < 0) std::exit(2);
  if (pid == 0) {
    close(report[0]);
    close(hold[1]);
    const auto started = Clock::now();
    const cudaError_t made = cudaFree(nullptr);
    double ms = made == cudaSuccess ? ms_since(started) : -1;
    if (write(report[1], &ms, sizeof ms) != sizeof ms) _exit(3);
    char byte;
    while (read(hold[0], &byte, 1) > 0) {
    }
    _exit(made == cudaSuccess ? 0 : 4);
  }
  close(report[1]);
  close(hold[0]);
  return {pid, report[0], hold[1]};
}

double wait_made(const Maker& m) {
  double ms = -1;
  if (read(m.report, &ms, sizeof ms) != sizeof ms || ms < 0) {
    std::fprintf(stderr, "a process could not make its CUDA context\n");
    std::exit(1);
  }
  return ms;
}

void finish(std::vector<Maker>& makers) {
  for (auto& m : makers) close(m.hold);
  for (auto& m : makers) {
    close(m.report);
    waitpid(m.pid, nullptr, 0);
  }
  makers.clear();
}

struct Outcome {
  double wall_ms = 0, slowest_ms = 0;
};

// `count` processes, started all at once or each after the one before has its context.
Outcome make(std::size_t count, bool at_once) {
  std::vector<Maker> makers;
  Outcome o;
  const auto started = Clock::now();
  if (at_once) {
    for (std::size_t i = 0; i < count; ++i) makers.push_back(start_maker());
    for (const auto& m : makers) o.slowest_ms = std::max(o.slowest_ms, wait_made(m));
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      makers.push_back(start_maker());
      o.slowest_ms = std::max(o.slowest_ms, wait_made(makers.back()));
    }
  }
  o.wall_ms = ms_since(started);
  finish(makers);
  return o;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t at_once = 4, repeats = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--at-once")) at_once = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--repeats")) repeats = std::strtoul(argv[i + 1], nullptr, 10);
  }
  if (at_once < 2 || repeats < 1) {
    std::fprintf(stderr, "usage: expr_bench_context_creation [--at-once K>=2] [--repeats N>=1]\n");
    return 2;
  }
  std::vector<Maker> keeper{start_maker()};
  std::printf("an idle context held by another process: made in %.1f ms\n", wait_made(keeper.front()));
  struct Condition {
    std::string name;
    std::size_t count;
    bool at_once;
    std::vector<double> wall, slowest;
  };
  std::vector<Condition> conditions{{"one", 1, false, {}, {}},
                                    {std::to_string(at_once) + " in a row", at_once, false, {}, {}},
                                    {std::to_string(at_once) + " at once", at_once, true, {}, {}}};
  for (std::size_t r = 0; r < repeats; ++r)
    for (auto& c : conditions) {
      const auto o = make(c.count, c.at_once);
      c.wall.push_back(o.wall_ms);
      c.slowest.push_back(o.slowest_ms);
    }
  finish(keeper);
  std::printf("%-12s %22s %28s\n", "condition", "wall, first to last (ms)", "slowest process's own (ms)");
  for (const auto& c : conditions) std::printf("%-12s %22.1f %28.1f\n", c.name.c_str(), median(c.wall), median(c.slowest));
  return 0;
}
