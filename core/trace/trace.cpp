#include "trace/trace.hpp"

#include <algorithm>

namespace expr::trace {

StringId Strings::intern(std::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(s);
  ids_.emplace(strings_.back(), id);
  return id;
}

namespace {
constexpr std::array<std::string_view, 11> copy_kind_names{"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                           "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
}

std::string_view to_string(CopyKind kind) { return copy_kind_names[static_cast<std::size_t>(kind)]; }

CopyKind copy_kind_from(std::string_view name) {
  for (std::size_t i = 1; i < copy_kind_names.size(); ++i)
    if (copy_kind_names[i] == name) return static_cast<CopyKind>(i);
  return CopyKind::unknown;
}

const DeviceProperties* Trace::device(std::uint32_t id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

std::size_t Trace::record_count() const {
  return ranges.size() + api_calls.size() + kernels.size() + copies.size() + memsets.size() + syncs.size();
}

namespace {

std::int32_t iteration_at(const std::vector<Iteration>& iterations, Ns t) {
  // Iterations are few and ordered; the first whose interval holds t.
  for (std::size_t i = 0; i < iterations.size(); ++i)
    if (iterations[i].start <= t && t <= iterations[i].end) return static_cast<std::int32_t>(i);
  return none;
}

template <class Span>
void link_spans(std::vector<Span>& spans, const std::vector<ApiCall>& calls,
                const std::unordered_map<std::uint32_t, std::int32_t>& call_of, std::uint64_t& unattributed) {
  for (auto& s : spans) {
    auto it = call_of.find(s.correlation);
    s.api_call = it == call_of.end() ? none : it->second;
    s.iteration = s.api_call == none ? none : calls[static_cast<std::size_t>(s.api_call)].iteration;
    if (s.iteration == none) ++unattributed;
  }
}

}  // namespace

void link(Trace& trace) {
  const auto range_count = static_cast<std::uint64_t>(trace.ranges.size());
  const auto iteration_count = static_cast<std::uint64_t>(trace.iterations.size());

  std::unordered_map<std::uint32_t, std::int32_t> call_of;
  call_of.reserve(trace.api_calls.size());
  for (std::size_t i = 0; i < trace.api_calls.size(); ++i) {
    auto& call = trace.api_calls[i];
    call.range = call.range_tag > 0 && call.range_tag <= range_count ? static_cast<std::int32_t>(call.range_tag - 1) : none;
    if (call.iteration_tag > 0 && call.iteration_tag <= iteration_count)
      call.iteration = static_cast<std::int32_t>(call.iteration_tag - 1);
    else if (call.range != none)
      call.iteration = trace.ranges[static_cast<std::size_t>(call.range)].iteration;
    else
      call.iteration = iteration_at(trace.iterations, call.start);
    // A runtime call and the driver call it makes share a correlation id only when CUPTI says so;
    // the first call seen with an id is the one the application made.
    call_of.try_emplace(call.correlation, static_cast<std::int32_t>(i));
  }

  trace.collection.unattributed = 0;
  link_spans(trace.kernels, trace.api_calls, call_of, trace.collection.unattributed);
  link_spans(trace.copies, trace.api_calls, call_of, trace.collection.unattributed);
  link_spans(trace.memsets, trace.api_calls, call_of, trace.collection.unattributed);
}

}  // namespace expr::trace
