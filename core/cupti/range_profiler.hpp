// The thin layer over CUPTI's range profiler and profiler host APIs (CUDA 12.6+), and the only code
// that drives them: hardware counters of every kernel the profiled work launches, one range per
// launch (auto ranges), over as many passes as the metrics need: CUPTI replays each kernel (kernel
// replay: it saves and restores the memory the kernel writes between passes), or the work runs once
// per pass (iteration replay: CUPTI's user replay). What the ranges mean is trace::join_counters'
// business (trace/counters.hpp).
//
// Every CUPTI call is written to the worker's log with its result (of the calls made per range,
// those for the first range and any that fail), so a failure on a GPU machine can be read from the
// log alone. A failed call throws CountersUnavailable with the call, CUPTI's
// error name and its message (insufficient privileges, another profiler attached, an unsupported
// device, a metric the device does not have).
//
// Not to be combined with the Activity API collector (cupti/collector.hpp): the runner ends tracing
// before it starts the counters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "trace/counters.hpp"

namespace expr::cupti {

struct CountersUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CounterProfile {
  std::vector<trace::CounterRange> ranges;  // in launch order
  std::uint32_t passes = 0;                 // replay passes the metrics needed
  std::size_t dropped_ranges = 0;           // launches beyond max_ranges, not measured
};

class RangeProfiler final {
 public:
  // Sets the profiler up on the current CUDA context of `device` (a runtime device index) for
  // `metrics` (Nsight Compute names) and up to `max_ranges` kernel launches, replayed as `replay`
  // says. `availability`: which counters the device exposes, as another process on this device
  // found it (counter_availability()), or empty to ask the device, which takes about 0.12 s on an
  // H100. Throws CountersUnavailable when CUPTI refuses.
  RangeProfiler(int device, std::vector<std::string> metrics, std::size_t max_ranges, trace::CounterReplay replay,
                std::vector<std::uint8_t> availability = {});
  ~RangeProfiler();  // disables the profiler and lets CUPTI go; never throws
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  std::uint32_t passes() const { return passes_; }
  // CUPTI's counter availability image the profiler was configured with.
  const std::vector<std::uint8_t>& counter_availability() const { return availability_; }
  // Profiles the kernels `work` launches and decodes every range's values. `work` returns when the
  // device is done with them; it runs once under kernel replay and once per pass under iteration
  // replay, and must launch the same kernels each time.
  CounterProfile profile(const std::function<void()>& work);

 private:
  struct Session;  // CUPTI's objects and images (range_profiler.cpp)
  std::unique_ptr<Session> session_;
  std::vector<std::string> metrics_;
  std::vector<std::uint8_t> availability_;
  trace::CounterReplay replay_;
  std::uint32_t passes_ = 0;
};

}  // namespace expr::cupti
