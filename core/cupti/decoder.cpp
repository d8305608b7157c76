// cupti::Decoder: each CUPTI record kind into its trace record, then the join into the trace.
#include "cupti/decoder.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "cupti/log.hpp"

namespace expr::cupti {

namespace {

trace::Dim3 dim(std::int32_t x, std::int32_t y, std::int32_t z) {
  return {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(z)};
}

// CUPTI reports 0 x 0 x 0 for a launch without clusters; the trace's "no cluster" is 1 x 1 x 1.
trace::Dim3 cluster(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return {std::max(x, 1u), std::max(y, 1u), std::max(z, 1u)};
}

trace::CopyKind copy_kind(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return trace::CopyKind::HtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return trace::CopyKind::DtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return trace::CopyKind::HtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return trace::CopyKind::AtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return trace::CopyKind::AtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return trace::CopyKind::AtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return trace::CopyKind::DtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return trace::CopyKind::DtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return trace::CopyKind::HtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return trace::CopyKind::PtoP;
    default: return trace::CopyKind::unknown;
  }
}

// Index into Decoder::sync_names.
std::size_t sync_index(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return 1;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return 2;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return 3;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return 4;
    default: return 0;
  }
}

// Runtime callback names carry the CUDA version that introduced them ("cudaLaunchKernel_v7000");
// the function's name is what precedes it. (Driver names such as cuMemcpyDtoH_v2 are the real
// exported symbols and stay as they are.)
std::string_view without_version(std::string_view name) {
  const auto v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 == name.size()) return name;
  const auto digits = name.substr(v + 2);
  const bool all_digits = std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  return all_digits ? name.substr(0, v) : name;
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) : mangled;
}

template <class Span, class Record>
void fill_span(Span& out, const Record& r) {
  out.device = r.deviceId;
  out.stream = r.streamId;
  out.start = static_cast<trace::Ns>(r.start);
  out.end = static_cast<trace::Ns>(r.end);
  out.correlation = r.correlationId;
}

}  // namespace

// ---- Records into trace records ----------------------------------------------------------------

Decoder::Decoder() {
  for (std::size_t k = 0; k < copy_names_.size(); ++k)
    copy_names_[k] = records_.strings.intern(fmt::format("Memcpy {}", to_string(static_cast<trace::CopyKind>(k))));
  for (std::size_t s = 0; s < sync_names.size(); ++s) sync_ids_[s] = records_.strings.intern(sync_names[s]);
  memset_name_ = records_.strings.intern("Memset");
  internal_launch_name_ = records_.strings.intern("(internal launch)");
}

void Decoder::add(const CompletedBuffer& buffer) {
  dropped_ += buffer.dropped_records;
  std::uint64_t lost = 0;
  for (auto* record = next_record(buffer, nullptr); record != nullptr; record = next_record(buffer, record)) {
    try {
      add(*record);
    } catch (const std::exception&) {  // out of memory: count what could not be kept
      ++lost;
    }
  }
  if (lost > 0) {
    dropped_ += lost;
    warn("{} records could not be stored (out of memory); counted as dropped", lost);
  }
}

void Decoder::add(const CUpti_Activity& record) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: decode(reinterpret_cast<const CUpti_ActivityKernel10&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: decode(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: decode(reinterpret_cast<const CUpti_ActivityMemset4&>(record)); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: decode(reinterpret_cast<const CUpti_ActivityAPI&>(record)); break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      decode(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY2: decode(reinterpret_cast<const CUpti_ActivityMemory4&>(record)); break;
    default: break;  // nothing else is enabled
  }
}

void Decoder::discard_records() {
  Decoder empty;
  empty.dropped_ = dropped_;
  *this = std::move(empty);
}

void Decoder::decode(const CUpti_ActivityKernel10& k) {
  trace::Kernel out;
  // Both names are the mangled one until merge_into(), which demangles each distinct name once.
  out.mangled = records_.strings.intern(k.name != nullptr ? k.name : "(unnamed kernel)");
  out.name = out.mangled;
  out.device = k.deviceId;
  out.stream = k.streamId;
  out.start = static_cast<trace::Ns>(k.start);
  out.end = static_cast<trace::Ns>(k.end);
  out.correlation = k.correlationId;
  auto& f = out.footprint;
  f.grid = dim(k.gridX, k.gridY, k.gridZ);
  f.block = dim(k.blockX, k.blockY, k.blockZ);
  f.cluster = cluster(k.clusterX, k.clusterY, k.clusterZ);
  f.registers_per_thread = k.registersPerThread;
  f.static_shared = static_cast<std::uint32_t>(k.staticSharedMemory);
  f.dynamic_shared = static_cast<std::uint32_t>(k.dynamicSharedMemory);
  f.local_per_thread = k.localMemoryPerThread;
  f.shared_executed = k.sharedMemoryExecuted;
  records_.kernels.push_back(out);
}

void Decoder::decode(const CUpti_ActivityMemcpy6& m) {
  trace::Copy out;
  out.kind = copy_kind(m.copyKind);
  out.name = copy_names_[static_cast<std::size_t>(out.kind)];
  out.bytes = m.bytes;
  fill_span(out, m);
  records_.copies.push_back(out);
}

void Decoder::decode(const CUpti_ActivityMemset4& m) {
  trace::Memset out;
  out.name = memset_name_;
  out.bytes = m.bytes;
  out.value = m.value;
  fill_span(out, m);
  records_.memsets.push_back(out);
}

void Decoder::decode(const CUpti_ActivityAPI& a) {
  trace::ApiCall out;
  out.api = a.kind == CUPTI_ACTIVITY_KIND_RUNTIME ? trace::Api::runtime : trace::Api::driver;
  out.name = a.kind == CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API ? internal_launch_name_ : api_name(out.api, a.cbid);
  if (a.kind != CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API) out.cbid = a.cbid;
  out.thread = a.threadId;  // gettid(): ActivityApi sets CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
  out.start = static_cast<trace::Ns>(a.start);
  out.end = static_cast<trace::Ns>(a.end);
  out.correlation = a.correlationId;
  records_.api_calls.push_back(out);
}

void Decoder::decode(const CUpti_ActivitySynchronization2& s) {
  trace::Synchronization out;
  out.name = sync_ids_[sync_index(s.type)];
  // The record has no thread; merge_into() takes it from the API call with the same correlation id.
  // CUPTI_SYNCHRONIZATION_INVALID_VALUE (no stream: event and context syncs) is kept as is.
  out.stream = s.streamId;
  out.start = static_cast<trace::Ns>(s.start);
  out.end = static_cast<trace::Ns>(s.end);
  out.correlation = s.correlationId;
  records_.syncs.push_back(out);
}

void Decoder::decode(const CUpti_ActivityMemory4& m) {
  const bool allocation = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  if (!allocation && m.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) return;
  const bool on_device = m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE || m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED ||
                         m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
  trace::MemoryEvent out;
  out.source = trace::MemorySource::driver;
  out.device = on_device ? static_cast<std::int32_t>(m.deviceId) : -1;
  out.time = static_cast<trace::Ns>(m.timestamp);
  out.bytes = allocation ? static_cast<std::int64_t>(m.bytes) : -static_cast<std::int64_t>(m.bytes);
  out.address = m.address;
  out.correlation = m.correlationId;
  records_.memory.push_back(out);
}

trace::StringId Decoder::api_name(trace::Api api, CUpti_CallbackId cbid) {
  auto& cache = api_names_[static_cast<std::size_t>(api)];
  if (cbid >= cache.size()) cache.resize(cbid + 1, 0);
  if (cache[cbid] == 0) cache[cbid] = look_up_api_name(api, cbid) + 1;
  return cache[cbid] - 1;
}

trace::StringId Decoder::look_up_api_name(trace::Api api, CUpti_CallbackId cbid) {
  const bool runtime = api == trace::Api::runtime;
  const char* name = callback_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  if (name == nullptr)
    return records_.strings.intern(fmt::format("({} API call {})", runtime ? "runtime" : "driver", cbid));
  return records_.strings.intern(runtime ? without_version(name) : std::string_view(name));
}

// ---- Into the trace -----------------------------------------------------------------------------

namespace {

constexpr auto by_correlation = [](const auto& a, const auto& b) { return a.correlation < b.correlation; };

// A synchronization record has no thread: its API call (same correlation id) has. Needs calls
// sorted by correlation id.
void join_threads(std::vector<trace::Synchronization>& syncs, const std::vector<trace::ApiCall>& calls) {
  for (auto& sync : syncs) {
    trace::ApiCall probe;
    probe.correlation = sync.correlation;
    const auto call = std::lower_bound(calls.begin(), calls.end(), probe, by_correlation);
    if (call != calls.end() && call->correlation == sync.correlation) sync.thread = call->thread;
  }
}

// Time order, ties by correlation id; for API calls sharing an id, the runtime call (the one the
// application made) first, which is what trace::link() expects.
void sort_by_time(std::vector<trace::ApiCall>& calls) {
  std::sort(calls.begin(), calls.end(), [](const trace::ApiCall& a, const trace::ApiCall& b) {
    return std::tie(a.start, a.correlation, a.api) < std::tie(b.start, b.correlation, b.api);
  });
}

template <class Record>
void sort_by_time(std::vector<Record>& records) {
  std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return std::tie(a.start, a.correlation) < std::tie(b.start, b.correlation);
  });
}

// The decoder's string ids to the trace's: each name used is interned there once.
class Names {
 public:
  Names(const trace::Strings& from, trace::Strings& to)
      : from_(from), to_(to), global_(from.size(), unset), demangled_(from.size(), unset) {}

  trace::StringId global(trace::StringId local) {
    auto& id = global_[local];
    if (id == unset) id = to_.intern(from_[local]);
    return id;
  }

  trace::StringId demangled(trace::StringId local) {
    auto& id = demangled_[local];
    if (id == unset) id = to_.intern(demangle(from_[local]));
    return id;
  }

 private:
  static constexpr trace::StringId unset = std::numeric_limits<trace::StringId>::max();
  const trace::Strings& from_;
  trace::Strings& to_;
  std::vector<trace::StringId> global_, demangled_;
};

template <class Record>
void append(std::vector<Record>& to, std::vector<Record>& from, Names& names) {
  for (auto& r : from) r.name = names.global(r.name);
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

void Decoder::merge_into(trace::Trace& trace) && {
  auto& r = records_;
  std::sort(r.api_calls.begin(), r.api_calls.end(), by_correlation);
  join_threads(r.syncs, r.api_calls);
  sort_by_time(r.api_calls);
  sort_by_time(r.kernels);
  sort_by_time(r.copies);
  sort_by_time(r.memsets);
  sort_by_time(r.syncs);

  Names names(r.strings, trace.strings);
  for (auto& k : r.kernels) {
    k.name = names.demangled(k.mangled);
    k.mangled = names.global(k.mangled);
  }
  trace.kernels.insert(trace.kernels.end(), r.kernels.begin(), r.kernels.end());
  append(trace.api_calls, r.api_calls, names);
  append(trace.copies, r.copies, names);
  append(trace.memsets, r.memsets, names);
  append(trace.syncs, r.syncs, names);
  std::stable_sort(r.memory.begin(), r.memory.end(), [](const trace::MemoryEvent& a, const trace::MemoryEvent& b) { return a.time < b.time; });
  trace.memory.insert(trace.memory.end(), r.memory.begin(), r.memory.end());

  // CUPTI could not time these (it documents this for lack of device memory); kept, but said.
  if (const auto untimed = std::count_if(r.kernels.begin(), r.kernels.end(),
                                         [](const trace::Kernel& k) { return k.start == 0 && k.end == 0; });
      untimed > 0)
    warn("{} kernels have no timestamps (CUPTI could not collect them); their durations read as 0", untimed);

  trace.collection.dropped_records += dropped_;
  trace.collection.device_traced = true;
  trace.collection.device_unavailable.clear();
}

}  // namespace expr::cupti
