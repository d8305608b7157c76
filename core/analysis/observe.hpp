// What every metric's analyzer builds its answer from: why a trace cannot answer, the caveats of
// the device's records, figures with their units, and the per-iteration evidence text. Shared by
// the catalog's families of metrics (metrics.cpp, memory.cpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/metrics.hpp"

namespace expr::analysis {

// What a metric needs of the trace before it can answer.
enum class Needs { device_trace, op_trace, allocator_trace, driver_memory_trace };

// Why `m`'s trace cannot answer `metric`, or nothing when it can.
std::optional<Unavailable> missing_trace(const outcome::Measurement& m, std::string_view metric, std::optional<Needs> needs);

// Why an experiment that did not finish has no figure, or nothing when it finished.
std::optional<Unavailable> not_ran(const outcome::Measurement& m);

// A metric call's argument, when written.
std::optional<std::string> arg(const MetricCall& call, const std::string& name);

// The device records the trace lost or could not place: counts and times may be low.
std::vector<std::string> device_caveats(const trace::Trace& t);

inline Quantity count(double v) { return {v, dimensionless, Display::number}; }
inline Quantity time_ns(double v) { return {v, duration, Display::duration}; }
inline Quantity bytes(double v) { return {v, data, Display::bytes}; }

double mean(const std::vector<double>& v);

// "5 in each of 3 traced iterations" or "per iteration: 5, 6, 5".
std::string per_iteration_text(const std::vector<double>& per_iteration, const std::function<std::string(double)>& show);

}  // namespace expr::analysis
