// What running one experiment produced: its status, timings, correctness, facts and trace.
// Workers fill it, results.json stores it, analysis and expectations read it.
#pragma once

#include <expr/plugin.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "series/series.hpp"
#include "trace/trace.hpp"

namespace expr::runner {

// Summary of repeated samples of one quantity, in nanoseconds.
struct Stats {
  std::size_t samples = 0;
  std::size_t iterations = 0;  // calls timed: a device sample is the mean of a batch of calls
  double median = 0, mean = 0, min = 0, max = 0;
  double noise = 0;        // spread of the samples relative to the median (robust: from the MAD)
  double seconds = 0;      // wall time spent taking the samples
  bool converged = false;  // the median was pinned down (runner/sampler.hpp) before the time budget ran out
};

struct Correctness {
  std::string what;
  double relative_error = 0;
  double tolerance = 0;
  bool ok() const { return relative_error <= tolerance; }  // false for NaN too
};

enum class Status { ok, failed, crashed, timed_out, skipped };
std::string_view to_string(Status status);
std::optional<Status> status_from(std::string_view name);

struct Measurement {
  std::string experiment;
  std::string plugin;
  std::map<std::string, ParamValue> params;
  series::Iterations iterations;  // what was asked for; the timing stats say what was done
  Device device = Device::cpu;
  Status status = Status::skipped;
  std::string reason;  // why it failed or was skipped; notes for ok ones (e.g. "ran on cpu: no CUDA device")

  std::optional<double> first_call_ns;  // the cold first run(), device work included
  std::string setup_warning;            // the setup rule check's finding (context.hpp); empty when none
  std::optional<Stats> host;            // host wall time of run(), device idle before each call
  std::optional<Stats> device_time;     // CUDA-event time per iteration, back to back
  std::optional<Work> work;
  std::vector<Correctness> correctness;
  std::map<std::string, std::string> facts;
  std::map<std::string, std::string> environment;

  std::shared_ptr<const trace::Trace> trace;  // null when nothing was traced
  std::string trace_file;                     // native trace, relative to the run directory
  std::string chrome_file;                    // Chrome/Perfetto trace, relative to the run directory

  // The cold first call once more, traced, in a fresh worker (runner/cold_trace.hpp): taken only
  // when a guess reads cold.*, and only after this experiment succeeded. Its own status and
  // reason say whether that worked; host is that one call's run() time, first_call the same with
  // the device's work, trace its trace.
  std::shared_ptr<const Measurement> cold;
};

}  // namespace expr::runner
