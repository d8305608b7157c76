// The Chrome trace writer: see chrome_trace.hpp and docs/chrome-trace.md.
#include "report/chrome_trace.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "trace/counters.hpp"
#include "util/atomic_file.hpp"

namespace expr::report {

namespace {

using Out = fmt::memory_buffer;

void escaped(Out& out, std::string_view s) {
  for (const char c : s) {
    switch (c) {
      case '"': out.append(std::string_view("\\\"")); break;
      case '\\': out.append(std::string_view("\\\\")); break;
      case '\n': out.append(std::string_view("\\n")); break;
      case '\t': out.append(std::string_view("\\t")); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
        else out.push_back(c);
    }
  }
}

class Writer {
 public:
  Writer(const trace::Trace& t, const std::vector<std::optional<analysis::KernelOccupancy>>& occupancies, Out& buf)
      : t_(t), occupancies_(occupancies), names_(t.strings.size()), buf_(buf), base_(t.earliest()), short_launch_(t.api_calls.size()) {
    // A launch and the device work it queued are written alike: when either is shorter than 1 µs,
    // both are begin/end pairs, so that HTA meets no launch without its work nor work without its launch.
    for (std::size_t i = 0; i < t.api_calls.size(); ++i) short_launch_[i] = is_short(t.api_calls[i].start, t.api_calls[i].end);
    const auto mark = [&](const auto& spans) {
      for (const auto& s : spans)
        if (s.api_call != trace::none && is_short(s.start, s.end)) short_launch_[static_cast<std::size_t>(s.api_call)] = true;
    };
    mark(t.kernels);
    mark(t.copies);
    mark(t.memsets);
  }

  void write(const ChromeTraceInfo& info) {
    buf_.reserve(t_.record_count() * 360);  // about what one event takes, flows and end events included
    fmt::format_to(out(), "{{\"schemaVersion\":1,\"traceName\":\"");
    escaped(buf_, info.title);
    buf_.append(std::string_view("\",\"trace_id\":\""));
    escaped(buf_, info.trace_id);
    // Timestamps count from the earliest record; the base is that record's Unix time, when the
    // trace recorded the clock's offset (traces from before it was kept have no base).
    fmt::format_to(out(), "\",\"displayTimeUnit\":\"ms\"");
    if (t_.unix_offset != 0) fmt::format_to(out(), ",\"baseTimeNanoseconds\":{}", base_ + t_.unix_offset);
    // "rank": N with a space, as the PyTorch profiler writes it: HTA finds the rank with that pattern.
    if (t_.distributed)
      fmt::format_to(out(), ",\"distributedInfo\":{{\"rank\": {}, \"world_size\": {}}}", t_.distributed->rank, t_.distributed->world_size);
    fmt::format_to(out(), ",\"deviceProperties\":[");
    for (std::size_t i = 0; i < t_.devices.size(); ++i) device_properties(i);
    fmt::format_to(out(), "],\"traceEvents\":[");
    metadata();
    for (std::size_t i = 0; i < t_.ranges.size(); ++i) range(t_.ranges[i], i + 1);
    for (std::size_t i = 0; i < t_.api_calls.size(); ++i) api_call(t_.api_calls[i], i);
    for (std::size_t i = 0; i < t_.kernels.size(); ++i) kernel(t_.kernels[i], i < occupancies_.size() ? occupancies_[i] : std::nullopt);
    for (const auto& c : t_.copies) copy(c);
    for (const auto& m : t_.memsets) memset(m);
    for (const auto& m : t_.memory) memory(m);
    fmt::format_to(out(), "\n]}}\n");
  }

 private:
  std::back_insert_iterator<Out> out() { return std::back_inserter(buf_); }

  void begin_event() {
    if (!first_) buf_.push_back(',');
    first_ = false;
    buf_.push_back('\n');
  }

  void device_properties(std::size_t i) {
    const auto& d = t_.devices[i];
    fmt::format_to(out(), "{}{{\"id\":{},\"name\":\"", i ? "," : "", d.id);
    escaped(buf_, d.name);
    buf_.push_back('"');
    // Recorded since traces give them; older traces lack them, and then so does the export.
    if (d.global_memory) fmt::format_to(out(), ",\"totalGlobalMem\":{}", d.global_memory);
    if (d.max_threads_per_block) fmt::format_to(out(), ",\"maxThreadsPerBlock\":{}", d.max_threads_per_block);
    if (d.shared_per_block) fmt::format_to(out(), ",\"sharedMemPerBlock\":{}", d.shared_per_block);
    fmt::format_to(out(),
                   ",\"computeMajor\":{},\"computeMinor\":{},\"numSms\":{},\"warpSize\":{},\"maxThreadsPerMultiprocessor\":{},"
                   "\"regsPerMultiprocessor\":{},\"regsPerBlock\":{},\"sharedMemPerMultiprocessor\":{},\"sharedMemPerBlockOptin\":{}}}",
                   d.major, d.minor, d.multiprocessors, d.warp_size, d.max_threads_per_sm, d.registers_per_sm,
                   d.max_registers_per_block, d.shared_per_sm, d.shared_per_block_optin);
  }

  void metadata() {
    std::set<std::uint32_t> threads;
    for (const auto& r : t_.ranges) threads.insert(r.thread);
    for (const auto& c : t_.api_calls) threads.insert(c.thread);
    for (const auto& m : t_.memory)
      if (m.source == trace::MemorySource::allocator) threads.insert(m.thread);
    begin_event();
    fmt::format_to(out(), "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"expr worker {}\"}}}}", t_.process,
                   t_.process);
    for (auto tid : threads) {
      begin_event();
      fmt::format_to(out(), "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"thread {}\"}}}}",
                     t_.process, tid, tid);
    }
    std::set<std::pair<std::uint32_t, std::uint32_t>> streams;
    auto add = [&](const auto& spans) {
      for (const auto& s : spans) streams.emplace(s.device, s.stream);
    };
    add(t_.kernels);
    add(t_.copies);
    add(t_.memsets);
    std::set<std::uint32_t> devices;
    for (auto [device, stream] : streams) {
      if (devices.insert(device).second) {
        begin_event();
        const auto* props = t_.device(device);
        fmt::format_to(out(), "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"GPU {}", device, device);
        if (props) {
          buf_.append(std::string_view(": "));
          escaped(buf_, props->name);
        }
        fmt::format_to(out(), "\"}}}}");
      }
      begin_event();
      fmt::format_to(out(), "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"stream {}\"}}}}",
                     device, stream, stream);
    }
  }

  // Names repeat (a million records may hold a few hundred names): each is escaped once.
  const std::string& name(trace::StringId id) {
    auto& n = names_[id];
    if (n.empty()) {
      Out e;
      escaped(e, t_.strings[id]);
      n = fmt::to_string(e);
    }
    return n;
  }

  static bool is_short(trace::Ns start, trace::Ns end) { return end - start < shortest_complete_event_ns; }

  // Device work, or the API call that launched some, goes with its pair (see the constructor).
  bool pair_is_short(std::int32_t api_call) const {
    return api_call != trace::none && short_launch_[static_cast<std::size_t>(api_call)];
  }

  // An event's opening, up to where its "args" go; end_span() closes it. A complete event, or a
  // begin/end pair when `as_pair` (chrome_trace.hpp says why).
  void begin_span(std::string_view cat, trace::StringId id, std::uint32_t pid, std::uint32_t tid, trace::Ns start, trace::Ns end,
                  bool as_pair) {
    begin_event();
    start -= base_;
    end -= base_;
    // ts and dur in µs with three decimals, exact to the ns; one format call per event, as the
    // export writes a million of them a second.
    if (!as_pair) {
      fmt::format_to(out(), FMT_COMPILE("{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}.{:03},\"dur\":{}.{:03}"), cat,
                     name(id), pid, tid, start / 1000, start % 1000, (end - start) / 1000, (end - start) % 1000);
      return;
    }
    fmt::format_to(out(), FMT_COMPILE("{{\"ph\":\"B\",\"cat\":\"{}\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}.{:03}"), cat, name(id), pid,
                   tid, start / 1000, start % 1000);
    pending_end_ = Pending{cat, id, pid, tid, end};
  }

  // The "E" carries the name and category too: TensorBoard's reader needs a name on every event.
  void end_span() {
    buf_.push_back('}');
    if (!pending_end_) return;
    const auto& e = *pending_end_;
    begin_event();
    fmt::format_to(out(), FMT_COMPILE("{{\"ph\":\"E\",\"cat\":\"{}\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}.{:03}}}"), e.cat, name(e.name),
                   e.pid, e.tid, e.end / 1000, e.end % 1000);
    pending_end_.reset();
  }

  // "External id" ties an op to the API calls and kernels inside it, as in PyTorch's traces.
  void range(const trace::HostRange& r, std::size_t external_id) {
    begin_span(r.kind == trace::RangeKind::op ? "cpu_op" : "user_annotation", r.name, t_.process, r.thread, r.start, r.end,
               is_short(r.start, r.end));
    fmt::format_to(out(), FMT_COMPILE(",\"args\":{{\"External id\":{}}}"), external_id);
    end_span();
  }

  void api_call(const trace::ApiCall& c, std::size_t index) {
    begin_span(c.api == trace::Api::runtime ? "cuda_runtime" : "cuda_driver", c.name, t_.process, c.thread, c.start, c.end,
               short_launch_[index]);
    if (c.cbid) fmt::format_to(out(), FMT_COMPILE(",\"args\":{{\"cbid\":{},"), c.cbid);
    else buf_.append(std::string_view(",\"args\":{"));
    fmt::format_to(out(), FMT_COMPILE("\"correlation\":{},\"External id\":{}}}"), c.correlation, c.range + 1);
    end_span();
  }

  // The launch's end of the arrow from an API call to the device work it queued.
  void flow(const trace::DeviceSpan& s) {
    if (s.api_call == trace::none) return;
    const auto& c = t_.api_calls[static_cast<std::size_t>(s.api_call)];
    const auto from = c.start - base_, to = s.start - base_;
    begin_event();
    fmt::format_to(out(), FMT_COMPILE("{{\"ph\":\"s\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}.{:03},\"cat\":\"ac2g\",\"name\":\"ac2g\"}}"),
                   s.correlation, t_.process, c.thread, from / 1000, from % 1000);
    begin_event();
    fmt::format_to(out(),
                   FMT_COMPILE("{{\"ph\":\"f\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}.{:03},\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}}"),
                   s.correlation, s.device, s.stream, to / 1000, to % 1000);
  }

  std::uint64_t external_id(const trace::DeviceSpan& s) const {
    return s.api_call == trace::none ? 0 : t_.api_calls[static_cast<std::size_t>(s.api_call)].range + 1;
  }

  void span_args(const trace::DeviceSpan& s) {
    fmt::format_to(out(), ",\"args\":{{\"External id\":{},\"device\":{},\"stream\":{},\"correlation\":{}", external_id(s), s.device,
                   s.stream, s.correlation);
    if (s.iteration != trace::none) fmt::format_to(out(), ",\"iteration\":{}", s.iteration);
  }

  // Bytes per ns, as the PyTorch profiler computes it.
  static double bandwidth(std::uint64_t bytes, trace::Ns duration) {
    return duration > 0 ? static_cast<double>(bytes) / static_cast<double>(duration) : 0.0;
  }

  void kernel(const trace::Kernel& k, const std::optional<analysis::KernelOccupancy>& occ) {
    begin_span("kernel", k.name, k.device, k.stream, k.start, k.end, is_short(k.start, k.end) || pair_is_short(k.api_call));
    span_args(k);
    const auto& f = k.footprint;
    fmt::format_to(out(),
                   ",\"registers per thread\":{},\"shared memory\":{},\"static shared memory\":{},\"dynamic shared memory\":{},"
                   "\"local memory per thread\":{},\"grid\":[{},{},{}],\"block\":[{},{},{}],\"cluster\":[{},{},{}]",
                   f.registers_per_thread, f.shared_per_block(), f.static_shared, f.dynamic_shared, f.local_per_thread, f.grid.x,
                   f.grid.y, f.grid.z, f.block.x, f.block.y, f.block.z, f.cluster.x, f.cluster.y, f.cluster.z);
    if (occ) {
      // Kineto's names with Kineto's meanings, then expr's figures under its own names.
      const auto& e = occ->kineto;
      const auto& o = occ->theoretical;
      fmt::format_to(out(),
                     ",\"blocks per SM\":{},\"warps per SM\":{},\"est. achieved occupancy %\":{},"
                     "\"resident blocks per SM\":{},\"resident warps per SM\":{},\"theoretical occupancy %\":{:.2f},\"occupancy limited by\":\"{}\"",
                     e.blocks_per_sm, e.warps_per_sm, e.achieved_occupancy_percent, o.blocks_per_sm, o.warps_per_sm, o.fraction * 100,
                     analysis::to_string(o.limiter));
    }
    counter_args(k);
    if (k.api_call != trace::none) {
      buf_.append(std::string_view(",\"launched by\":\""));
      escaped(buf_, t_.strings[t_.api_calls[static_cast<std::size_t>(k.api_call)].name]);
      buf_.push_back('"');
    }
    buf_.push_back('}');
    end_span();
    flow(k);
  }

  // The counters phase's values, named as the PyTorch profiler names them where it has the figure
  // (it estimates achieved occupancy; these are measured), by their Nsight name otherwise.
  void counter_args(const trace::Kernel& k) {
    for (std::size_t i = 0; i < k.counters.size() && i < t_.counters.metrics.size(); ++i) {
      if (!std::isfinite(k.counters[i])) continue;
      const auto& nsight = t_.counters.metrics[i];
      const auto* known = std::find_if(trace::counter_metrics.begin(), trace::counter_metrics.end(),
                                       [&](const auto& m) { return m.nsight == nsight; });
      buf_.append(std::string_view(",\""));
      escaped(buf_, known != trace::counter_metrics.end() ? std::string(known->chrome_arg) : nsight);
      fmt::format_to(out(), "\":{:.2f}", k.counters[i]);
    }
  }

  void copy(const trace::Copy& c) {
    begin_span("gpu_memcpy", c.name, c.device, c.stream, c.start, c.end, is_short(c.start, c.end) || pair_is_short(c.api_call));
    span_args(c);
    fmt::format_to(out(), ",\"bytes\":{},\"memory bandwidth (GB/s)\":{:.2f}}}", c.bytes, bandwidth(c.bytes, c.duration()));
    end_span();
    flow(c);
  }

  void memset(const trace::Memset& m) {
    begin_span("gpu_memset", m.name, m.device, m.stream, m.start, m.end, is_short(m.start, m.end) || pair_is_short(m.api_call));
    span_args(m);
    fmt::format_to(out(), ",\"bytes\":{},\"memory bandwidth (GB/s)\":{:.2f}}}", m.bytes, bandwidth(m.bytes, m.duration()));
    end_span();
    flow(m);
  }

  // The allocator's events as the PyTorch profiler writes them with profile_memory ("[memory]"
  // instants, which TensorBoard's memory view draws); the driver's under a name of expr's own, on the
  // thread of the API call that made them, so no reader adds them to the allocator's curve.
  void memory(const trace::MemoryEvent& m) {
    const bool allocator = m.source == trace::MemorySource::allocator;
    const auto thread = allocator ? std::optional(m.thread) : thread_of_call(m.correlation);
    const auto ts = m.time - base_;
    begin_event();
    fmt::format_to(out(), FMT_COMPILE("{{\"ph\":\"i\",\"cat\":\"{}\",\"s\":\"{}\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}.{:03}"),
                   allocator ? "cpu_instant_event" : "cuda_driver", thread ? "t" : "p", allocator ? "[memory]" : "[driver memory]",
                   t_.process, thread.value_or(0), ts / 1000, ts % 1000);
    // Device Type is c10's: 0 for the CPU, 1 for CUDA.
    fmt::format_to(out(), FMT_COMPILE(",\"args\":{{\"Device Type\":{},\"Device Id\":{},\"Addr\":{},\"Bytes\":{}"), m.device >= 0 ? 1 : 0,
                   m.device, m.address, m.bytes);
    if (m.total_allocated >= 0) fmt::format_to(out(), FMT_COMPILE(",\"Total Allocated\":{}"), m.total_allocated);
    if (m.total_reserved >= 0) fmt::format_to(out(), FMT_COMPILE(",\"Total Reserved\":{}"), m.total_reserved);
    if (!allocator) fmt::format_to(out(), FMT_COMPILE(",\"correlation\":{}"), m.correlation);
    if (m.iteration != trace::none) fmt::format_to(out(), FMT_COMPILE(",\"iteration\":{}"), m.iteration);
    buf_.append(std::string_view("}}"));
  }

  std::optional<std::uint32_t> thread_of_call(std::uint32_t correlation) {
    if (threads_of_calls_.empty())
      for (const auto& c : t_.api_calls) threads_of_calls_.try_emplace(c.correlation, c.thread);
    const auto it = threads_of_calls_.find(correlation);
    return it == threads_of_calls_.end() ? std::nullopt : std::optional(it->second);
  }

  struct Pending {
    std::string_view cat;
    trace::StringId name;
    std::uint32_t pid, tid;
    trace::Ns end;
  };

  const trace::Trace& t_;
  const std::vector<std::optional<analysis::KernelOccupancy>>& occupancies_;
  std::vector<std::string> names_;
  Out& buf_;
  trace::Ns base_;
  bool first_ = true;
  std::optional<Pending> pending_end_;  // the "E" of a begin/end pair, written once its args are
  std::vector<bool> short_launch_;      // per API call: it, or device work it launched, is under 1 µs
  std::unordered_map<std::uint32_t, std::uint32_t> threads_of_calls_;  // correlation id -> thread, once a driver memory event asks
};

}  // namespace

void render_chrome_trace(const trace::Trace& trace, const std::vector<std::optional<analysis::KernelOccupancy>>& occupancies,
                         const ChromeTraceInfo& info, fmt::memory_buffer& out) {
  Writer(trace, occupancies, out).write(info);
}

void write_chrome_trace(const trace::Trace& trace, const std::vector<std::optional<analysis::KernelOccupancy>>& occupancies,
                        const ChromeTraceInfo& info, const std::filesystem::path& file) {
  fmt::memory_buffer out;
  render_chrome_trace(trace, occupancies, info, out);
  util::write_atomically(file, std::string_view(out.data(), out.size()));
}

}  // namespace expr::report
