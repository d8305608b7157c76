// What the runner asks of the CUDA runtime: is there a device, what is it, and how long did the
// device take. Only worker processes call these; the parent never initialises CUDA.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace expr::cuda {

// The number of CUDA devices, or the runtime's reason there are none (no driver, no device).
struct Availability {
  int devices = 0;
  std::string reason;
};
Availability probe();

trace::DeviceProperties properties(int device);

// GPU name, memory, driver and CUDA runtime versions, as strings for results.json. CUPTI's version
// is cupti::api_version(), asked for apart: an experiment's worker reads this before its cold first
// call, which must find nothing of the profiler in the process.
std::map<std::string, std::string> environment(int device);

void select(int device);
// Whether other processes may create contexts on the device while this one holds one: false in
// the exclusive compute modes, where a second process's context is refused.
bool shared_by_processes(int device);
void synchronize();                // waits for all work on the current device
std::string last_error();          // clears the runtime's sticky error state where it can; "" when none

// Device time between points of a stream of work, measured with CUDA events on the legacy default
// stream, which orders itself after every blocking stream: record() marks a point, elapsed()
// waits for the last point and returns the gaps between consecutive points in nanoseconds.
class EventTimer {
 public:
  explicit EventTimer(std::size_t capacity);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void reset();
  void record();
  std::size_t recorded() const { return used_; }
  std::vector<double> elapsed();

 private:
  std::vector<void*> events_;
  std::size_t used_ = 0;
};

// Throws std::runtime_error("<what>: <CUDA error name>: <description>") when status is an error.
void check(int status, const char* what);

}  // namespace expr::cuda
