// What running one experiment produced: its status, timings, correctness, facts and trace.
// Workers fill it, results.json stores it, analysis and guesses read it. A leaf of the
// pipeline: every stage after the trace model may use it, and it uses none of them.
#pragma once

#include <expr/plugin.hpp>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace expr::outcome {

// How much to run. Timed sampling stops once the median is known to within max_noise (after
// min_samples and min_time) or once max_time is spent; runner/sampler.hpp says how. "Noise" is
// always the median's own uncertainty; how far the samples scatter is their "spread".
//
// Timing runs in `rounds` worker processes: the first measures everything, each later one only
// times (setup, a warm-up, the timing loops), and the sample and time budgets are shared among
// them. What differs between two unchanged runs is mostly the process (its placement, allocator
// and page layout), so a figure's median is the median of its rounds' medians, and their scatter
// is the noise a comparison of two runs must allow for.
struct Iterations {
  int warmup = 3;
  int traced = 3;
  int min_samples = 10;
  double min_time = 0.2;   // seconds, over all rounds
  double max_time = 3.0;   // seconds per timing loop, over all rounds
  double max_noise = 0.005; // standard error of the median, relative to it
  int rounds = 3;

  // What one round's timing loops ask for: its share of the samples and of the time, and the noise
  // each round may keep for their median to meet max_noise.
  Iterations round_share() const;
};

// Repeated samples of one quantity, in nanoseconds, and their summary.
struct Stats {
  std::size_t count = 0;        // samples taken
  std::vector<double> samples;  // each of them, in the order taken (empty in runs recorded before expr.results/2)
  // The median of the samples of each round: each worker process that timed this figure, in the
  // order they ran. What differs between runs is mostly the process (its placement, its clocks'
  // state), so these, not the samples, tell how far the figure moves from one process to the next.
  // With two or more, `median` is their median, so one odd process does not move it. Empty in runs
  // recorded before rounds existed: they read as one round whose median is `median`
  // (analysis/noise.hpp: round_medians).
  std::vector<double> rounds{};
  std::size_t iterations = 0;   // calls timed: a device sample is the mean of a batch of calls
  double median = 0, mean = 0, min = 0, max = 0;
  double spread = 0;       // how far the samples scatter, relative to the median (robust: 1.4826 MAD / median)
  double seconds = 0;      // wall time spent taking the samples
  bool converged = false;  // the median was pinned down (runner/sampler.hpp) before the time budget ran out
  // How far this figure moves from one run to the next on this machine, beyond what its own samples
  // show: the standard deviation of the log of a run's figure (the geometric mean of its round
  // medians) over repeated runs of an unchanged build (`expr calibrate`, kept in the history). 0
  // when the point was never calibrated.
  double run_to_run = 0;
  // The degrees of freedom of that estimate: the calibration's runs, less one (calibrations made
  // earlier counted every round of every run); 0 where unknown (recorded before it was kept).
  double run_to_run_df = 0;
};

struct Correctness {
  std::string what;
  double relative_error = 0;
  double tolerance = 0;
  bool ok() const { return relative_error <= tolerance; }  // false for NaN too
};

// The trace of the traced iterations: in memory, or in its native file and read the first time
// something asks for it, so a run directory can be read without loading every trace. Copies share
// what was loaded.
class TraceSource {
 public:
  TraceSource() = default;
  explicit TraceSource(std::shared_ptr<const trace::Trace> trace);
  explicit TraceSource(std::filesystem::path file);

  explicit operator bool() const { return state_ != nullptr; }
  // Loads the file on first use; throws std::runtime_error naming the file when it cannot.
  const trace::Trace& operator*() const;
  const trace::Trace* operator->() const { return &**this; }
  const std::filesystem::path& file() const;  // empty for a trace that only lives in memory

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// interrupted: the run was stopped (Ctrl-C, SIGTERM) before this experiment finished; what it
// measured before is kept.
enum class Status { ok, failed, crashed, timed_out, skipped, interrupted };

// When a step of an experiment's worker began, in CLOCK_MONOTONIC nanoseconds (trace/clock.hpp),
// one clock for the parent and its workers. The steps, in order: "spawned" (the parent, just
// before fork), "worker" (the child running), then each phase as it starts ("setup", within it
// "cuda context", "device queries" and "plugin setup"; "first call", "verify", "quiet" (held
// while the worker started ahead for the next job makes its CUDA context), "warm-up",
// "timing", "tracing", "counters" where counters are on, "teardown"), "result" (the child about
// to send it) and "ended" (the parent, once the child's result is in and its pipe closed; runs
// recorded before timing rounds have "reaped" there, once the child was gone). A failed experiment's timeline stops where it failed. It shows
// where the time of a run goes: bench/fixed_cost.cpp reads it.
struct Mark {
  std::string step;
  trace::Ns at = 0;
};
std::string_view to_string(Status status);
std::optional<Status> status_from(std::string_view name);

struct Measurement {
  std::string experiment;
  std::string plugin;
  std::map<std::string, ParamValue> params;
  Iterations iterations;  // what was asked for; the timing stats say what was done
  Device device = Device::cpu;
  Status status = Status::skipped;
  std::string reason;  // why it failed or was skipped; notes for ok ones (e.g. "ran on cpu: no CUDA device")

  std::optional<double> first_call_ns;  // the cold first run(), device work included
  std::string setup_warning;            // the setup rule check's finding (runner/context.hpp); empty when none
  std::optional<Stats> host;            // host wall time of run(), device idle before each call
  // Device time per iteration with the launch queue held full (device/queue_hold.hpp): what the
  // device spends, without the host's launch gaps. The metric gpu_time.
  std::optional<Stats> device_time;
  // Device time per iteration of the same calls launched back to back as a plain loop would, the
  // host's launch gaps included: where it exceeds device_time the loop is launch-bound. loop_time.
  std::optional<Stats> loop_time;
  // Why device_time could not be taken with the queue held (run() waits for the device itself),
  // so that it is the loop's time; empty when it was held.
  std::string queue_not_held;
  // Where gpu_time disagrees with the traced kernels' own durations for an iteration of one
  // kernel (a timing that cannot be right); empty when they agree or cannot be compared.
  std::string timing_warning;
  std::optional<double> wall_seconds;   // the experiment's wall time in its workers, as the parent saw it
  std::optional<Work> work;
  std::vector<Correctness> correctness;
  std::map<std::string, std::string> facts;
  std::map<std::string, std::string> environment;
  std::vector<Mark> timeline;  // empty in runs recorded before it existed

  TraceSource trace;  // empty when nothing was traced

  // The cold first call once more, traced, in a fresh worker (runner/cold_trace.hpp): taken only
  // when a guess reads cold.*, and only after this experiment succeeded. Its own status and
  // reason say whether that worked; host is that one call's run() time, first_call the same with
  // the device's work, trace its trace.
  std::shared_ptr<const Measurement> cold;
};

}  // namespace expr::outcome
