// Building blocks the metrics share: which records a filter keeps, and per-iteration sums.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trace/trace.hpp"
#include "util/regex.hpp"

namespace expr::analysis {

// Keeps device records whose name, launching API call, or any enclosing framework op / plugin
// range matches a regex (util/regex.hpp, searched anywhere in the name). Results are cached per
// distinct string, so a million records cost a handful of regex searches.
class SpanFilter {
 public:
  struct Patterns {
    std::optional<std::string> name, op, api;
  };
  SpanFilter(const trace::Trace& trace, const Patterns& patterns);

  bool keeps(const trace::DeviceSpan& span) const;
  bool name_matches(trace::StringId name) const { return matches(name_, name); }

 private:
  struct Cached {
    std::optional<util::Regex> regex;
    mutable std::vector<signed char> answers;  // per string id: -1 unknown, 0 no, 1 yes
  };
  bool matches(const Cached& c, trace::StringId id) const;
  bool op_matches(std::int32_t range) const;

  const trace::Trace& trace_;
  Cached name_, op_, api_;
};

// The innermost framework op around a launching API call, or "" when there is none.
std::string_view enclosing_op(const trace::Trace& trace, std::int32_t api_call);

// Kernel names as people read them: "void at::native::foo<4, ...>(int, ...)" -> "at::native::foo".
std::string short_kernel_name(std::string_view demangled);

// Sum of `weight` over spans kept by `keep`, for each traced iteration.
template <class Span, class Keep, class Weight>
std::vector<double> per_iteration(const trace::Trace& trace, const std::vector<Span>& spans, Keep keep, Weight weight) {
  std::vector<double> sums(trace.iterations.size(), 0.0);
  for (const auto& s : spans)
    if (s.iteration != trace::none && keep(s)) sums[static_cast<std::size_t>(s.iteration)] += weight(s);
  return sums;
}

// Time the device was busy with anything, per iteration: the union of device spans, so work that
// overlaps on several streams counts once.
std::vector<double> busy_per_iteration(const trace::Trace& trace);

}  // namespace expr::analysis
