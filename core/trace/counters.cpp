// The join of counter ranges to kernel records: see counters.hpp.
#include "trace/counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

namespace expr::trace {

namespace {

// A range named by a number: its position in launch order.
std::optional<std::size_t> ordinal(const std::string& name) {
  std::size_t n = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (error != std::errc{} || end != name.data() + name.size() || name.empty()) return std::nullopt;
  return n;
}

}  // namespace

const CounterMetric* counter_metric_by_field(std::string_view field) {
  for (const auto& m : counter_metrics)
    if (m.field == field) return &m;
  return nullptr;
}

bool is_nsight_metric_name(std::string_view name) {
  const auto separator = name.find("__");
  if (separator == std::string_view::npos || separator == 0 || separator + 2 >= name.size()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'; });
}

std::vector<std::size_t> kernels_in_launch_order(const Trace& trace, std::int32_t iteration) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < trace.kernels.size(); ++i)
    if (trace.kernels[i].iteration == iteration) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return trace.kernels[a].correlation < trace.kernels[b].correlation; });
  return order;
}

std::string join_counters(Trace& trace, std::int32_t iteration, const std::vector<CounterRange>& ranges) {
  trace.counters.iteration = iteration;
  trace.counters.ranges = static_cast<std::uint32_t>(ranges.size());
  const auto kernels = kernels_in_launch_order(trace, iteration);
  if (kernels.size() != ranges.size())
    return fmt::format("the counters iteration launched {} kernels and traced iteration {} launched {}: the iterations differ, so "
                       "the counters cannot be matched to kernel records",
                       ranges.size(), iteration, kernels.size());
  const auto metrics = trace.counters.metrics.size();
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto& range = ranges[i];
    const auto& kernel = trace.kernels[kernels[i]];
    if (range.values.size() != metrics)
      return fmt::format("counter range {} holds {} values for {} metrics", range.name, range.values.size(), metrics);
    if (const auto n = ordinal(range.name)) {
      if (*n != i) return fmt::format("counter range {} is at position {} of the counters iteration", range.name, i);
    } else if (range.name != trace.strings[kernel.name] && range.name != trace.strings[kernel.mangled]) {
      return fmt::format("counter range '{}' is at the position of kernel '{}' in traced iteration {}", range.name,
                         trace.strings[kernel.name], iteration);
    }
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) trace.kernels[kernels[i]].counters = ranges[i].values;
  return "";
}

}  // namespace expr::trace
