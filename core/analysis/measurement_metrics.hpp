// The metrics of a measurement itself rather than of its trace: the timings (gpu_time, loop_time,
// host_time, first_call, launch_ratio), the throughputs from the plugin's work model, the
// correctness figure and the plugin's facts. metrics.cpp puts them in the catalog.
#pragma once

#include <vector>

#include "analysis/metrics.hpp"

namespace expr::analysis {

std::vector<MetricSpec> measurement_metrics();

}  // namespace expr::analysis
