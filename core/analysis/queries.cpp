// The filters and sums the metrics share: see queries.hpp.
#include "analysis/queries.hpp"

#include <algorithm>
#include <limits>

namespace expr::analysis {

SpanFilter::SpanFilter(const trace::Trace& trace, const Patterns& patterns) : trace_(trace) {
  auto prepare = [&](Cached& c, const std::optional<std::string>& pattern) {
    if (!pattern) return;
    c.regex.emplace(*pattern);
    c.answers.assign(trace.strings.size(), -1);
  };
  prepare(name_, patterns.name);
  prepare(op_, patterns.op);
  prepare(api_, patterns.api);
}

bool SpanFilter::matches(const Cached& c, trace::StringId id) const {
  if (!c.regex) return true;
  auto& answer = c.answers[id];
  if (answer < 0) answer = c.regex->search(trace_.strings[id]) ? 1 : 0;
  return answer == 1;
}

bool SpanFilter::op_matches(std::int32_t range) const {
  for (; range != trace::none; range = trace_.ranges[static_cast<std::size_t>(range)].parent) {
    const auto& r = trace_.ranges[static_cast<std::size_t>(range)];
    if (r.kind != trace::RangeKind::iteration && matches(op_, r.name)) return true;
  }
  return false;
}

bool SpanFilter::keeps(const trace::DeviceSpan& span) const {
  if (!matches(name_, span.name)) return false;
  if (!api_.regex && !op_.regex) return true;
  if (span.api_call == trace::none) return false;
  const auto& call = trace_.api_calls[static_cast<std::size_t>(span.api_call)];
  return matches(api_, call.name) && (!op_.regex || op_matches(call.range));
}

std::string_view enclosing_op(const trace::Trace& trace, std::int32_t api_call) {
  if (api_call == trace::none) return {};
  for (auto r = trace.api_calls[static_cast<std::size_t>(api_call)].range; r != trace::none;
       r = trace.ranges[static_cast<std::size_t>(r)].parent) {
    const auto& range = trace.ranges[static_cast<std::size_t>(r)];
    if (range.kind == trace::RangeKind::op) return trace.strings[range.name];
  }
  return {};
}

std::string short_kernel_name(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  // Cut at the first '<' or '(' that is not part of an "(anonymous namespace)" qualifier.
  std::size_t end = 0;
  while (end < name.size() && name[end] != '<' && name[end] != '(') ++end;
  while (end < name.size() && name.substr(end).starts_with("(anonymous namespace)")) {
    end += 21;
    while (end < name.size() && name[end] != '<' && name[end] != '(') ++end;
  }
  return std::string(name.substr(0, end));
}

std::vector<double> busy_per_iteration(const trace::Trace& trace) {
  std::vector<std::vector<std::pair<trace::Ns, trace::Ns>>> spans(trace.iterations.size());
  auto collect = [&](const auto& records) {
    for (const auto& s : records)
      if (s.iteration != trace::none) spans[static_cast<std::size_t>(s.iteration)].emplace_back(s.start, s.end);
  };
  collect(trace.kernels);
  collect(trace.copies);
  collect(trace.memsets);
  std::vector<double> busy;
  for (auto& intervals : spans) {
    std::sort(intervals.begin(), intervals.end());
    double total = 0;
    trace::Ns covered_until = std::numeric_limits<trace::Ns>::min();
    for (const auto& [start, end] : intervals) {
      const auto from = std::max(start, covered_until);
      if (end > from) total += static_cast<double>(end - from);
      covered_until = std::max(covered_until, end);
    }
    busy.push_back(total);
  }
  return busy;
}

}  // namespace expr::analysis
