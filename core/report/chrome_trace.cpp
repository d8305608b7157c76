#include "report/chrome_trace.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

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
  Writer(const trace::Trace& t, const std::vector<std::optional<analysis::Occupancy>>& occupancies, Out& buf)
      : t_(t), occupancies_(occupancies), names_(t.strings.size()), buf_(buf), base_(t.earliest()) {}

  void write(const std::string& title) {
    buf_.reserve(t_.record_count() * 300);  // about what one event takes, flows included
    fmt::format_to(out(), "{{\"schemaVersion\":1,\"traceName\":\"");
    escaped(buf_, title);
    // Timestamps count from the earliest record, as in PyTorch's traces, which also give the base.
    fmt::format_to(out(), "\",\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":{},\"deviceProperties\":[", base_);
    for (std::size_t i = 0; i < t_.devices.size(); ++i) device_properties(i);
    fmt::format_to(out(), "],\"traceEvents\":[");
    metadata();
    for (std::size_t i = 0; i < t_.ranges.size(); ++i) range(t_.ranges[i], i + 1);
    for (const auto& c : t_.api_calls) api_call(c);
    for (std::size_t i = 0; i < t_.kernels.size(); ++i) kernel(t_.kernels[i], i < occupancies_.size() ? occupancies_[i] : std::nullopt);
    for (const auto& c : t_.copies) copy(c);
    for (const auto& m : t_.memsets) memset(m);
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
    fmt::format_to(out(),
                   "\",\"computeMajor\":{},\"computeMinor\":{},\"numSms\":{},\"warpSize\":{},\"maxThreadsPerMultiprocessor\":{},"
                   "\"regsPerMultiprocessor\":{},\"regsPerBlock\":{},\"sharedMemPerMultiprocessor\":{},\"sharedMemPerBlockOptin\":{}}}",
                   d.major, d.minor, d.multiprocessors, d.warp_size, d.max_threads_per_sm, d.registers_per_sm,
                   d.max_registers_per_block, d.shared_per_sm, d.shared_per_block_optin);
  }

  void metadata() {
    std::set<std::uint32_t> threads;
    for (const auto& r : t_.ranges) threads.insert(r.thread);
    for (const auto& c : t_.api_calls) threads.insert(c.thread);
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

  void complete(std::string_view cat, trace::StringId id, std::uint32_t pid, std::uint32_t tid, trace::Ns start, trace::Ns end) {
    begin_event();
    start -= base_;
    end -= base_;
    fmt::format_to(out(), FMT_COMPILE("{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}.{:03},\"dur\":{}.{:03}"),
                   cat, name(id), pid, tid, start / 1000, start % 1000, (end - start) / 1000, (end - start) % 1000);
  }

  // "External id" ties an op to the API calls and kernels inside it, as in PyTorch's traces.
  void range(const trace::HostRange& r, std::size_t external_id) {
    complete(r.kind == trace::RangeKind::op ? "cpu_op" : "user_annotation", r.name, t_.process, r.thread, r.start, r.end);
    fmt::format_to(out(), FMT_COMPILE(",\"args\":{{\"External id\":{}}}}}"), external_id);
  }

  void api_call(const trace::ApiCall& c) {
    complete(c.api == trace::Api::runtime ? "cuda_runtime" : "cuda_driver", c.name, t_.process, c.thread, c.start, c.end);
    fmt::format_to(out(), ",\"args\":{{\"correlation\":{},\"External id\":{}}}}}", c.correlation, c.range + 1);
  }

  // The launch's end of the arrow from an API call to the device work it queued.
  void flow(const trace::DeviceSpan& s) {
    if (s.api_call == trace::none) return;
    const auto& c = t_.api_calls[static_cast<std::size_t>(s.api_call)];
    begin_event();
    fmt::format_to(out(), FMT_COMPILE("{{\"ph\":\"s\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}.{:03},\"cat\":\"ac2g\",\"name\":\"ac2g\"}}"),
                   s.correlation, t_.process, c.thread, (c.start - base_) / 1000, (c.start - base_) % 1000);
    begin_event();
    fmt::format_to(out(),
                   FMT_COMPILE("{{\"ph\":\"f\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}.{:03},\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}}"),
                   s.correlation, s.device, s.stream, (s.start - base_) / 1000, (s.start - base_) % 1000);
  }

  std::uint64_t external_id(const trace::DeviceSpan& s) const {
    return s.api_call == trace::none ? 0 : t_.api_calls[static_cast<std::size_t>(s.api_call)].range + 1;
  }

  void span_args(const trace::DeviceSpan& s) {
    fmt::format_to(out(), ",\"args\":{{\"External id\":{},\"device\":{},\"stream\":{},\"correlation\":{}", external_id(s), s.device,
                   s.stream, s.correlation);
    if (s.iteration != trace::none) fmt::format_to(out(), ",\"iteration\":{}", s.iteration);
  }

  void kernel(const trace::Kernel& k, const std::optional<analysis::Occupancy>& occ) {
    complete("kernel", k.name, k.device, k.stream, k.start, k.end);
    span_args(k);
    const auto& f = k.footprint;
    fmt::format_to(out(),
                   ",\"registers per thread\":{},\"shared memory\":{},\"static shared memory\":{},\"dynamic shared memory\":{},"
                   "\"local memory per thread\":{},\"grid\":[{},{},{}],\"block\":[{},{},{}],\"cluster\":[{},{},{}]",
                   f.registers_per_thread, f.shared_per_block(), f.static_shared, f.dynamic_shared, f.local_per_thread, f.grid.x,
                   f.grid.y, f.grid.z, f.block.x, f.block.y, f.block.z, f.cluster.x, f.cluster.y, f.cluster.z);
    if (occ)
      fmt::format_to(out(), ",\"blocks per SM\":{},\"warps per SM\":{},\"theoretical occupancy %\":{:.2f},\"occupancy limited by\":\"{}\"",
                     occ->blocks_per_sm, occ->warps_per_sm, occ->fraction * 100, analysis::to_string(occ->limiter));
    counter_args(k);
    if (k.api_call != trace::none) {
      buf_.append(std::string_view(",\"launched by\":\""));
      escaped(buf_, t_.strings[t_.api_calls[static_cast<std::size_t>(k.api_call)].name]);
      buf_.push_back('"');
    }
    fmt::format_to(out(), "}}}}");
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
    complete("gpu_memcpy", c.name, c.device, c.stream, c.start, c.end);
    span_args(c);
    const double seconds = static_cast<double>(c.duration()) * 1e-9;
    fmt::format_to(out(), ",\"bytes\":{},\"memory bandwidth (GB/s)\":{:.2f}}}}}", c.bytes,
                   seconds > 0 ? static_cast<double>(c.bytes) / seconds / 1e9 : 0.0);
    flow(c);
  }

  void memset(const trace::Memset& m) {
    complete("gpu_memset", m.name, m.device, m.stream, m.start, m.end);
    span_args(m);
    fmt::format_to(out(), ",\"bytes\":{}}}}}", m.bytes);
    flow(m);
  }

  const trace::Trace& t_;
  const std::vector<std::optional<analysis::Occupancy>>& occupancies_;
  std::vector<std::string> names_;
  Out& buf_;
  trace::Ns base_;
  bool first_ = true;
};

}  // namespace

void render_chrome_trace(const trace::Trace& trace, const std::vector<std::optional<analysis::Occupancy>>& occupancies,
                         const std::string& title, fmt::memory_buffer& out) {
  Writer(trace, occupancies, out).write(title);
}

void write_chrome_trace(const trace::Trace& trace, const std::vector<std::optional<analysis::Occupancy>>& occupancies,
                        const std::string& title, const std::filesystem::path& file) {
  fmt::memory_buffer out;
  render_chrome_trace(trace, occupancies, title, out);
  util::write_atomically(file, std::string_view(out.data(), out.size()));
}

}  // namespace expr::report
