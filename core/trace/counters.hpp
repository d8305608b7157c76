// Joining the counters phase's ranges to the trace's kernels. CUPTI's range profiler, in auto range
// mode, measures each kernel launch as one range named by its position ("0", "1", ...: CUPTI
// serializes the launches and numbers them in launch order), so the ranges of the counters
// iteration line up, one for one, with the kernels of a traced iteration taken in launch order
// (correlation id). Pure: the unit tests feed it synthetic ranges.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/trace.hpp"

namespace expr::trace {

// The documented counter set: what `counters: on` measures, each with the name a guess reads
// (kernel(...).achieved_occupancy), the Nsight Compute metric (`ncu --metrics` accepts the same
// name, which bench/counters_vs_ncu.py relies on), the name of the Chrome trace's kernel argument
// (the PyTorch profiler's where it has one) and what it means. All are percentages of a peak.
struct CounterMetric {
  std::string_view field;
  std::string_view nsight;
  std::string_view chrome_arg;
  std::string_view doc;
};
inline constexpr std::array<CounterMetric, 4> counter_metrics{{
    {"achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy %",
     "achieved occupancy: warps active per multiprocessor over the maximum, while the multiprocessor was active (hardware counters)"},
    {"sm_throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput %",
     "SM throughput: the busiest of the multiprocessor's units, as a percentage of its peak over the kernel's duration (hardware counters)"},
    {"dram_throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput %",
     "DRAM throughput as a percentage of its peak over the kernel's duration (hardware counters)"},
    {"tensor_active", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "tensor pipe active %",
     "tensor pipes active (all kinds: mma and Hopper's warpgroup mma), percentage of cycles while the multiprocessor was active (hardware counters)"},
}};

// The documented metric whose field is `field`, or nullptr.
const CounterMetric* counter_metric_by_field(std::string_view field);
// Whether `name` has the shape of an Nsight Compute metric (unit__counter.rollup...): raw names are
// checked against the device only once CUPTI sees them.
bool is_nsight_metric_name(std::string_view name);

// One range as the profiler decoded it: its name and a value per metric, in the metrics' order.
struct CounterRange {
  std::string name;
  std::vector<double> values;
};

// Gives each kernel of traced iteration `iteration` (launch order) the values of the range at the
// same position, and sets trace.counters.iteration and .ranges. A range named by a number must
// carry its position; a range named otherwise (user ranges) must carry the kernel's demangled or
// mangled name. Returns an empty string when every kernel got its values; otherwise a one-line
// reason (more or fewer ranges than kernels, a name that does not match), and no kernel carries
// any value: a partial join would pair counters with the wrong launches.
std::string join_counters(Trace& trace, std::int32_t iteration, const std::vector<CounterRange>& ranges);

// The kernels of traced iteration `iteration`, as indices into trace.kernels, in launch order.
std::vector<std::size_t> kernels_in_launch_order(const Trace& trace, std::int32_t iteration);

}  // namespace expr::trace
