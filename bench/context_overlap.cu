// Does a CUDA context in another process disturb what a worker measures? `expr run` holds an idle
// context on the device while it runs (runner/context_keeper.hpp), so that its workers create
// theirs sooner, and a worker started ahead of its turn would create its context while the one
// before it is timing; this benchmark says what each costs the measurement.
//
//   expr_bench_context_overlap [--rounds N] [--seconds S]
//
// One process times two calls the way expr does, in rounds that cycle through three conditions:
// "alone"; "kept", another process holding an idle context (as the keeper does); and "churn",
// another process creating and destroying contexts in a loop (fork, cudaFree(0), exit). The other
// process is started fresh for its round.
//  - device time: a batch of 200 launches of a ~50 µs arithmetic kernel between two CUDA events,
//    per launch (the device is never idle: each launch takes ~2 µs of host time);
//  - host time: one launch of a 1-thread kernel and cudaStreamSynchronize, per call.
// Each round prints its medians (and, for churn, how many contexts were made meanwhile); the
// summary sets the medians of each condition's round medians side by side.
#include <cuda_runtime.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

__global__ void arithmetic(float* out, int steps) {
  float x = threadIdx.x * 1e-3f;
  for (int i = 0; i < steps; ++i) x = x * 1.0000001f + 1e-7f;
  if (x == -1.f) out[0] = x;  // never true; keeps the loop
}

__global__ void tiny(float* out) {
  if (threadIdx.x == 1024) out[0] = 0;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The other process, until SIGTERM: an idle context held ("keep"), or contexts created and
// destroyed ("churn"). Prints how many contexts it made.
volatile sig_atomic_t stop = 0;

int other(bool churn) {
  signal(SIGTERM, [](int) { stop = 1; });
  long made = 0;
  if (!churn) {
    made = cudaFree(nullptr) == cudaSuccess;
    while (!stop) pause();
  }
  while (churn && !stop) {
    const pid_t pid = fork();
    if (pid == 0) _exit(cudaFree(nullptr) == cudaSuccess ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    made += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  std::printf("%ld\n", made);
  return 0;
}

struct Round {
  double device_us = 0, host_us = 0;
};

Round measure(double seconds, float* scratch, int steps) {
  cudaEvent_t begin, end;
  check(cudaEventCreate(&begin), "cudaEventCreate");
  check(cudaEventCreate(&end), "cudaEventCreate");
  std::vector<double> device, host;
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    constexpr int batch = 200;
    check(cudaEventRecord(begin), "cudaEventRecord");
    for (int i = 0; i < batch; ++i) arithmetic<<<132 * 4, 256>>>(scratch, steps);
    check(cudaEventRecord(end), "cudaEventRecord");
    check(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime");
    device.push_back(ms * 1e3 / batch);
    for (int i = 0; i < 200; ++i) {
      const auto t0 = Clock::now();
      tiny<<<1, 1>>>(scratch);
      check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
      host.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  return {median(device), median(host)};
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 10;
  double seconds = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "keep" || a == "churn") return other(a == "churn");
    if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--rounds N] [--seconds S]\n", argv[0]);
      return 2;
    }
  }
  float* scratch = nullptr;
  check(cudaMalloc(&scratch, 4096), "cudaMalloc");
  // Steps for about 50 µs a launch, found once.
  int steps = 4000;
  for (int k = 0; k < 2; ++k) steps = std::max(100, static_cast<int>(steps * 50.0 / measure(0.2, scratch, steps).device_us));
  const char* names[] = {"alone", "kept", "churn"};
  std::vector<double> device[3], host[3];
  for (int r = 0; r < 3 * rounds; ++r) {
    const int mode = r % 3;
    pid_t pid = 0;
    int out[2] = {-1, -1};
    if (mode > 0) {
      if (pipe(out) != 0) return 1;
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_adddup2(&actions, out[1], 1);
      char* child_argv[] = {argv[0], const_cast<char*>(mode == 1 ? "keep" : "churn"), nullptr};
      if (posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, child_argv, environ) != 0) return 1;
      posix_spawn_file_actions_destroy(&actions);
      close(out[1]);
      usleep(500000);  // the kept context made; the churn's first under way
    }
    const auto m = measure(seconds, scratch, steps);
    long made = 0;
    if (mode > 0) {
      kill(pid, SIGTERM);
      char text[32] = {};
      if (read(out[0], text, sizeof text - 1) > 0) made = std::atol(text);
      close(out[0]);
      waitpid(pid, nullptr, 0);
    }
    device[mode].push_back(m.device_us);
    host[mode].push_back(m.host_us);
    std::printf("round %2d %-5s device %8.3f us  host %7.2f us%s\n", r / 3 + 1, names[mode], m.device_us, m.host_us,
                mode == 2 ? (", " + std::to_string(made) + " contexts made meanwhile").c_str() : "");
    std::fflush(stdout);
  }
  const double d0 = median(device[0]), h0 = median(host[0]);
  std::printf("%-6s device time per launch %8.3f us, host time per call %7.2f us\n", "alone", d0, h0);
  for (int mode = 1; mode < 3; ++mode)
    std::printf("%-6s device time per launch %8.3f us (%+.2f%%), host time per call %7.2f us (%+.2f%%)\n", names[mode], median(device[mode]),
                100 * (median(device[mode]) / d0 - 1), median(host[mode]), 100 * (median(host[mode]) / h0 - 1));
  return 0;
}
