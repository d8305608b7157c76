#include "trace/trace.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

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

namespace {
// The enum whose value is the index of `name` in `names`, if it is there.
template <class Enum, std::size_t N>
std::optional<Enum> named(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Enum>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 2> memory_source_names{"allocator", "driver"};
constexpr std::array<std::string_view, 2> counter_replay_names{"kernel", "iteration"};
constexpr std::array<std::string_view, 4> counter_state_names{"not_taken", "off", "unavailable", "collected"};
}  // namespace

std::string_view to_string(MemorySource source) { return memory_source_names[static_cast<std::size_t>(source)]; }

std::string_view to_string(CounterReplay replay) { return counter_replay_names[static_cast<std::size_t>(replay)]; }

std::optional<CounterReplay> counter_replay_from(std::string_view name) { return named<CounterReplay>(counter_replay_names, name); }

std::string_view to_string(CounterCollection::State state) { return counter_state_names[static_cast<std::size_t>(state)]; }

std::optional<CounterCollection::State> counter_state_from(std::string_view name) {
  return named<CounterCollection::State>(counter_state_names, name);
}

const DeviceProperties* Trace::device(std::uint32_t id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

std::size_t Trace::record_count() const {
  return ranges.size() + api_calls.size() + kernels.size() + copies.size() + memsets.size() + syncs.size() + memory.size();
}

Ns Trace::earliest() const {
  Ns e = std::numeric_limits<Ns>::max();
  auto consider = [&](const auto& records) {
    for (const auto& r : records) e = std::min(e, r.start);
  };
  consider(ranges), consider(api_calls), consider(kernels), consider(copies), consider(memsets);
  for (const auto& m : memory) e = std::min(e, m.time);
  return e == std::numeric_limits<Ns>::max() ? 0 : e;
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

// For each API call, the innermost range of its thread that contains its start. Ranges of one
// thread nest, so a sweep by start time with a stack of open ranges finds it.
void place_in_ranges(Trace& t) {
  auto by_thread_then_start = [](const auto& records) {
    std::vector<std::int32_t> order(records.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
      const auto &x = records[static_cast<std::size_t>(a)], &y = records[static_cast<std::size_t>(b)];
      return std::tie(x.thread, x.start, y.end) < std::tie(y.thread, y.start, x.end);  // outer range first
    });
    return order;
  };
  const auto ranges = by_thread_then_start(t.ranges);
  const auto calls = by_thread_then_start(t.api_calls);
  std::vector<std::int32_t> open;
  std::size_t next = 0;
  std::uint32_t thread = 0;
  for (const auto c : calls) {
    auto& call = t.api_calls[static_cast<std::size_t>(c)];
    if (open.empty() || call.thread != thread) open.clear();
    thread = call.thread;
    const auto range = [&](std::int32_t i) -> const HostRange& { return t.ranges[static_cast<std::size_t>(i)]; };
    while (next < ranges.size() && std::tie(range(ranges[next]).thread, range(ranges[next]).start) <= std::tie(call.thread, call.start)) {
      const auto& r = range(ranges[next]);
      if (r.thread == call.thread) {
        while (!open.empty() && range(open.back()).end < r.start) open.pop_back();
        open.push_back(ranges[next]);
      }
      ++next;
    }
    while (!open.empty() && range(open.back()).end < call.start) open.pop_back();
    call.range = open.empty() ? none : open.back();
  }
}

}  // namespace

void link(Trace& trace) {
  place_in_ranges(trace);
  std::unordered_map<std::uint32_t, std::int32_t> call_of;
  call_of.reserve(trace.api_calls.size());
  for (std::size_t i = 0; i < trace.api_calls.size(); ++i) {
    auto& call = trace.api_calls[i];
    call.iteration = call.range != none ? trace.ranges[static_cast<std::size_t>(call.range)].iteration
                                        : iteration_at(trace.iterations, call.start);
    // A runtime call and the driver call it makes share a correlation id only when CUPTI says so;
    // the first call seen with an id is the one the application made.
    call_of.try_emplace(call.correlation, static_cast<std::int32_t>(i));
  }

  trace.collection.unattributed = 0;
  link_spans(trace.kernels, trace.api_calls, call_of, trace.collection.unattributed);
  link_spans(trace.copies, trace.api_calls, call_of, trace.collection.unattributed);
  link_spans(trace.memsets, trace.api_calls, call_of, trace.collection.unattributed);
  for (auto& m : trace.memory) {
    if (m.source != MemorySource::driver) continue;
    const auto it = call_of.find(m.correlation);
    // A release at the process's end, or by a library's own thread, may have no call traced.
    m.iteration = it == call_of.end() ? iteration_at(trace.iterations, m.time) : trace.api_calls[static_cast<std::size_t>(it->second)].iteration;
  }
}

}  // namespace expr::trace
