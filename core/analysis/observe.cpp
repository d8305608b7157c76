// The pieces of every metric's answer: see observe.hpp.
#include "analysis/observe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>

namespace expr::analysis {

std::optional<Unavailable> missing_trace(const outcome::Measurement& m, std::string_view metric, std::optional<Needs> needs) {
  if (!m.trace) {
    if (m.status != outcome::Status::ok)
      return Unavailable{fmt::format("experiment {} {}", outcome::to_string(m.status), m.reason)};
    return Unavailable{fmt::format("{} needs a trace, and none was recorded", metric)};
  }
  const auto& t = *m.trace;
  if (t.iterations.empty()) return Unavailable{fmt::format("{} needs traced iterations, and none ran", metric)};
  const bool device = needs == Needs::device_trace || needs == Needs::driver_memory_trace;
  if (device && !t.collection.device_traced)
    return Unavailable{fmt::format("{} needs device tracing, which was unavailable: {}", metric, t.collection.device_unavailable)};
  if (needs == Needs::op_trace && !t.collection.ops_traced)
    return Unavailable{fmt::format("{} needs framework op tracing, and plugin {} traces no framework ops", metric, m.plugin)};
  if (needs == Needs::allocator_trace && !t.collection.allocator_traced)
    return Unavailable{fmt::format("{} needs the framework allocator's events, and plugin {} reports none (a LibTorch plugin calls "
                                   "expr_torch::trace_memory in setup)",
                                   metric, m.plugin)};
  if (needs == Needs::driver_memory_trace && !t.collection.driver_memory_traced)
    return Unavailable{fmt::format("{} needs the CUDA driver's allocation records, and the trace holds none (CUPTI refused them, or "
                                   "the trace was recorded before expr took them)",
                                   metric)};
  return std::nullopt;
}

std::optional<Unavailable> not_ran(const outcome::Measurement& m) {
  if (m.status == outcome::Status::ok) return std::nullopt;
  return Unavailable{fmt::format("experiment {}{}{}", outcome::to_string(m.status), m.reason.empty() ? "" : ": ", m.reason)};
}

std::optional<std::string> arg(const MetricCall& call, const std::string& name) {
  auto it = call.args.find(name);
  return it == call.args.end() ? std::nullopt : std::optional(it->second);
}

std::vector<std::string> device_caveats(const trace::Trace& t) {
  std::vector<std::string> caveats;
  if (t.collection.dropped_records > 0)
    caveats.push_back(fmt::format("the trace lost {} device records: counts and times may be low", t.collection.dropped_records));
  if (t.collection.unattributed > 0)
    caveats.push_back(fmt::format("{} device records could not be placed in an iteration", t.collection.unattributed));
  return caveats;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::string per_iteration_text(const std::vector<double>& per_iteration, const std::function<std::string(double)>& show) {
  const bool same = std::adjacent_find(per_iteration.begin(), per_iteration.end(), std::not_equal_to<>()) == per_iteration.end();
  if (same) return fmt::format("{} in each of {} traced iterations", show(per_iteration.front()), per_iteration.size());
  std::string s = "per iteration:";
  for (std::size_t i = 0; i < per_iteration.size(); ++i) s += (i ? ", " : " ") + show(per_iteration[i]);
  return s;
}

}  // namespace expr::analysis
