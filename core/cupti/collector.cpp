#include "cupti/collector.hpp"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "trace/clock.hpp"

namespace expr::cupti {

namespace {

// Records are written into buffers lent to CUPTI. 8 MiB holds some 50 000 records, so a buffer
// comes back rarely; the cap bounds memory should records outpace processing, and past it CUPTI
// drops records and counts them (cuptiActivityGetNumDroppedRecords), which stop() reports.
constexpr std::size_t buffer_size = std::size_t{8} << 20;
constexpr std::size_t max_buffers = 64;
constexpr std::size_t buffer_alignment = 8;  // CUPTI's ACTIVITY_RECORD_ALIGNMENT

constexpr std::array required_kinds{
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,          CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,          CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
// Kernels the driver launches outside any public API call (libraries such as cuBLAS do this):
// without these records such kernels have no launching call, so no iteration. Optional, since it
// only adds attribution.
constexpr auto internal_launch_kind = CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API;

// The buffer and timestamp callbacks carry no user pointer, so they find the collector here.
// CUPTI is one per process anyway, so only one collector can be active at a time.
std::atomic<Collector*> active{nullptr};

// Problems that do not stop collection go to the worker's log (its stderr). Never throws: it is
// called from CUPTI callbacks and noexcept paths.
template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    fmt::print(stderr, "expr: cupti: {}\n", fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
  }
}

std::string_view kind_name(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return "INTERNAL_LAUNCH_API";
    default: return "another kind";
  }
}

// "CUPTI_ERROR_...: what it means", on one line (CUPTI's messages may span lines, or merely repeat
// the code's name).
std::string describe(CUptiResult result) {
  const char* name = nullptr;
  const char* message = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown CUPTI error";
  std::string text = name;
  if (cuptiGetErrorMessage(result, &message) == CUPTI_SUCCESS && message != nullptr &&
      std::string_view(message) != name) {
    text += ": ";
    text += message;
  }
  std::replace(text.begin(), text.end(), '\n', ' ');
  text.erase(text.find_last_not_of(' ') + 1);
  return text;
}

void check(CUptiResult result, std::string_view what) {
  if (result != CUPTI_SUCCESS) throw std::runtime_error(fmt::format("{} failed: {}", what, describe(result)));
}

// CUPTI stamps every record with this clock (host-side records when they happen, device-side ones
// when it converts GPU time), so device records line up with the host ranges of the trace.
std::uint64_t CUPTIAPI timestamp() { return static_cast<std::uint64_t>(trace::now()); }

// We subscribe only to claim CUPTI, which is how another client (a profiler) is detected; no
// callback domain is enabled, so this is never called.
void CUPTIAPI no_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// LibTorch asks the runtime and the driver several questions around every launch (cudaGetDevice,
// cuDevicePrimaryCtxGetState, ...): six records per launch on the H200, most of the cost of tracing
// a launch-bound loop, and none of them queues work. Calls that only read state are not recorded.
bool is_query(std::string_view name) {
  for (const std::string_view word : {"Get", "Query", "Peek", "IsCapturing"})
    if (name.find(word) != std::string_view::npos) return true;
  return false;
}

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

constexpr std::array<std::string_view, 5> sync_names{"unknown", "event", "stream wait event", "stream", "context"};

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

}  // namespace

// ---- The buffers lent to CUPTI -----------------------------------------------------------------

class Collector::Buffers {
 public:
  Buffers() { free_.reserve(max_buffers); }
  ~Buffers() {
    for (auto* buffer : free_) std::free(buffer);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  // A free buffer, or nullptr (CUPTI then drops records and counts them) at the cap or out of memory.
  std::uint8_t* take() {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      auto* buffer = free_.back();
      free_.pop_back();
      return buffer;
    }
    auto* buffer = allocated_ < max_buffers
                       ? static_cast<std::uint8_t*>(std::aligned_alloc(buffer_alignment, buffer_size))
                       : nullptr;
    if (buffer != nullptr)
      ++allocated_;
    else if (!warned_) {
      warned_ = true;
      warn("no record buffer to give CUPTI ({} buffers of {} MiB in use); records are dropped and counted", allocated_,
           buffer_size >> 20);
    }
    return buffer;
  }

  // Room for every buffer was reserved, so this never allocates (it runs in a CUPTI callback).
  void give(std::uint8_t* buffer) {
    std::lock_guard lock(mutex_);
    free_.push_back(buffer);
  }

 private:
  std::mutex mutex_;
  std::vector<std::uint8_t*> free_;
  std::size_t allocated_ = 0;
  bool warned_ = false;
};

// ---- Records decoded from the buffers ----------------------------------------------------------

// Everything here is cheap per record: vectors that grow amortized, names interned with the
// transparent hash of trace::Strings (no std::string made for a name seen before), API names
// cached by callback id. CUPTI's name pointers are never kept.
struct Collector::Staging {
  std::mutex mutex;      // buffers may complete on several CUPTI threads
  trace::Trace records;  // with strings of its own, moved into the real trace by merge()
  std::array<std::vector<trace::StringId>, 2> api_names;  // [Api][cbid]: StringId + 1, 0 until looked up
  std::array<trace::StringId, 11> copy_names{};           // by trace::CopyKind
  std::array<trace::StringId, sync_names.size()> sync_ids{};
  trace::StringId memset_name = 0;
  trace::StringId internal_launch_name = 0;
  std::uint64_t dropped = 0;

  Staging() {
    for (std::size_t k = 0; k < copy_names.size(); ++k)
      copy_names[k] = records.strings.intern(fmt::format("Memcpy {}", to_string(static_cast<trace::CopyKind>(k))));
    for (std::size_t s = 0; s < sync_names.size(); ++s) sync_ids[s] = records.strings.intern(sync_names[s]);
    memset_name = records.strings.intern("Memset");
    internal_launch_name = records.strings.intern("(internal launch)");
  }

  void take(std::uint8_t* buffer, std::size_t valid_bytes, std::size_t dropped_records) {
    std::lock_guard lock(mutex);
    dropped += dropped_records;
    CUpti_Activity* record = nullptr;
    std::uint64_t lost = 0;
    for (;;) {
      const auto r = cuptiActivityGetNextRecord(buffer, valid_bytes, &record);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (r != CUPTI_SUCCESS) {
        // An incomplete record (its work had not finished at a forced flush) ends what can be read.
        warn("a record buffer ends in a record that cannot be read ({}); the rest is lost", describe(r));
        break;
      }
      try {
        add(*record);
      } catch (const std::exception&) {  // out of memory: count what could not be kept
        ++lost;
      }
    }
    if (lost > 0) {
      dropped += lost;
      warn("{} records could not be stored (out of memory); counted as dropped", lost);
    }
  }

  void add(const CUpti_Activity& record) {
    switch (record.kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: add(reinterpret_cast<const CUpti_ActivityKernel10&>(record)); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: add(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record)); break;
      case CUPTI_ACTIVITY_KIND_MEMSET: add(reinterpret_cast<const CUpti_ActivityMemset4&>(record)); break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
      case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: add(reinterpret_cast<const CUpti_ActivityAPI&>(record)); break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        add(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record));
        break;
      default: break;  // nothing else is enabled
    }
  }

  void add(const CUpti_ActivityKernel10& k) {
    trace::Kernel out;
    // Both names are the mangled one until merge(), which demangles each distinct name once.
    out.mangled = records.strings.intern(k.name != nullptr ? k.name : "(unnamed kernel)");
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
    records.kernels.push_back(out);
  }

  void add(const CUpti_ActivityMemcpy6& m) {
    trace::Copy out;
    out.kind = copy_kind(m.copyKind);
    out.name = copy_names[static_cast<std::size_t>(out.kind)];
    out.bytes = m.bytes;
    fill_span(out, m);
    records.copies.push_back(out);
  }

  void add(const CUpti_ActivityMemset4& m) {
    trace::Memset out;
    out.name = memset_name;
    out.bytes = m.bytes;
    out.value = m.value;
    fill_span(out, m);
    records.memsets.push_back(out);
  }

  template <class Span, class Record>
  static void fill_span(Span& out, const Record& r) {
    out.device = r.deviceId;
    out.stream = r.streamId;
    out.start = static_cast<trace::Ns>(r.start);
    out.end = static_cast<trace::Ns>(r.end);
    out.correlation = r.correlationId;
  }

  void add(const CUpti_ActivityAPI& a) {
    trace::ApiCall out;
    out.api = a.kind == CUPTI_ACTIVITY_KIND_RUNTIME ? trace::Api::runtime : trace::Api::driver;
    out.name = a.kind == CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API ? internal_launch_name : api_name(out.api, a.cbid);
    out.thread = a.threadId;  // gettid(): start() sets CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
    out.start = static_cast<trace::Ns>(a.start);
    out.end = static_cast<trace::Ns>(a.end);
    out.correlation = a.correlationId;
    records.api_calls.push_back(out);
  }

  void add(const CUpti_ActivitySynchronization2& s) {
    trace::Synchronization out;
    out.name = sync_ids[sync_index(s.type)];
    // The record has no thread; merge() takes it from the API call with the same correlation id.
    // CUPTI_SYNCHRONIZATION_INVALID_VALUE (no stream: event and context syncs) is kept as is.
    out.stream = s.streamId;
    out.start = static_cast<trace::Ns>(s.start);
    out.end = static_cast<trace::Ns>(s.end);
    out.correlation = s.correlationId;
    records.syncs.push_back(out);
  }

  trace::StringId api_name(trace::Api api, CUpti_CallbackId cbid) {
    auto& cache = api_names[static_cast<std::size_t>(api)];
    if (cbid >= cache.size()) cache.resize(cbid + 1, 0);
    if (cache[cbid] == 0) cache[cbid] = look_up_api_name(api, cbid) + 1;
    return cache[cbid] - 1;
  }

  trace::StringId look_up_api_name(trace::Api api, CUpti_CallbackId cbid) {
    const bool runtime = api == trace::Api::runtime;
    const char* name = nullptr;
    const auto r =
        cuptiGetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name);
    if (r != CUPTI_SUCCESS || name == nullptr)
      return records.strings.intern(fmt::format("({} API call {})", runtime ? "runtime" : "driver", cbid));
    return records.strings.intern(runtime ? without_version(name) : std::string_view(name));
  }
};

// ---- The C callbacks ---------------------------------------------------------------------------

// Exceptions must not cross into CUPTI, hence the catch-alls.
struct Callbacks {
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;  // as many as fit
    try {
      if (Collector* c = active.load(std::memory_order_acquire)) *buffer = c->buffers_->take();
      if (*buffer != nullptr) *size = buffer_size;
    } catch (...) {
      warn("could not lend a record buffer; records are dropped and counted");
    }
  }

  static void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                        std::size_t valid_bytes) {
    std::size_t dropped = 0;
    if (const auto r = cuptiActivityGetNumDroppedRecords(context, stream, &dropped); r != CUPTI_SUCCESS)
      warn("cuptiActivityGetNumDroppedRecords failed: {}", describe(r));
    Collector* c = active.load(std::memory_order_acquire);
    if (c == nullptr) {
      // stop() flushes before it lets go, so this means a record buffer outlived its collector.
      warn("a record buffer ({} bytes, {} records dropped) came back with no collector; it is lost", valid_bytes,
           dropped);
      std::free(buffer);
      return;
    }
    try {
      c->staging_->take(buffer, valid_bytes, dropped);
    } catch (...) {
      warn("a record buffer could not be processed; its records are lost");
    }
    c->buffers_->give(buffer);
  }
};

// ---- The collector -----------------------------------------------------------------------------

Collector::Collector(trace::Trace& trace)
    : trace_(trace), buffers_(std::make_unique<Buffers>()), staging_(std::make_unique<Staging>()) {}

Collector::~Collector() {
  if (!enabled_.load()) return;
  // stop() was not called (the run failed): let CUPTI go; the records staged so far are discarded.
  disable();
  flush();
  release();
}

bool Collector::start() {
  if (enabled_.load()) return true;
  Collector* none = nullptr;
  if (!active.compare_exchange_strong(none, this)) {
    trace_.collection.device_traced = false;
    trace_.collection.device_unavailable = "another CUPTI collector is already active in this process";
    return false;
  }
  try {
    enable();
  } catch (const std::exception& e) {
    const bool any_enabled = !enabled_kinds_.empty();
    disable();
    if (any_enabled) flush();  // so no stray record reaches a later collector
    release();
    trace_.collection.device_traced = false;
    trace_.collection.device_unavailable = e.what();
    return false;
  }
  enabled_.store(true);
  prime();
  return true;
}

// CUPTI sets itself up when it records its first API call: 4.4 ms on the H200, which showed up
// inside the first traced iteration. One recorded call here pays for it; its records are dropped.
void Collector::prime() {
  (void)cudaDeviceSynchronize();
  flush();
  auto fresh = std::make_unique<Staging>();
  std::lock_guard lock(staging_->mutex);
  fresh->dropped = staging_->dropped;
  staging_.swap(fresh);  // the old staging, unlocked first, goes with `fresh` at the end of scope
}

void Collector::enable() {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) throw std::runtime_error("no CUDA driver");
  int devices = 0;
  if (const auto e = cudaGetDeviceCount(&devices); e != cudaSuccess)
    throw std::runtime_error(fmt::format("no CUDA device: {}: {}", cudaGetErrorName(e), cudaGetErrorString(e)));
  if (devices == 0) throw std::runtime_error("no CUDA device");

  subscribe();
  // CUPTI's default thread id on Linux is pthread_self(); the system one is gettid(), which is what
  // trace::current_thread() records for host ranges. Must be set before any record is made.
  check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType(SYSTEM)");
  // Before any kind is enabled, so that every record is stamped with the trace clock.
  check(cuptiActivityRegisterTimestampCallback(&timestamp), "cuptiActivityRegisterTimestampCallback");
  check(cuptiActivityRegisterCallbacks(&Callbacks::buffer_requested, &Callbacks::buffer_completed),
        "cuptiActivityRegisterCallbacks");
  for (const auto kind : required_kinds) {
    check(cuptiActivityEnable(kind), fmt::format("cuptiActivityEnable({})", kind_name(kind)));
    enabled_kinds_.push_back(kind);
  }
  if (const auto r = cuptiActivityEnable(internal_launch_kind); r == CUPTI_SUCCESS)
    enabled_kinds_.push_back(internal_launch_kind);
  else
    warn(
        "cuptiActivityEnable(INTERNAL_LAUNCH_API) failed: {}; kernels launched inside libraries "
        "may have no launching API call",
        describe(r));
  leave_out_queries();
}


void Collector::leave_out_queries() {
  const auto leave_out = [](CUpti_CallbackDomain domain, CUpti_CallbackId count,
                            CUptiResult (*enable)(CUpti_CallbackId, std::uint8_t)) {
    for (CUpti_CallbackId cbid = 1; cbid < count; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr || !is_query(name)) continue;
      if (const auto r = enable(cbid, 0); r != CUPTI_SUCCESS)
        warn("cannot leave {} out of the trace: {}", name, describe(r));
    }
  };
  leave_out(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, &cuptiActivityEnableRuntimeApi);
  leave_out(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, &cuptiActivityEnableDriverApi);
}

void Collector::subscribe() {
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "expr";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof holder;
  CUpti_SubscriberHandle subscriber = nullptr;
  const auto r = cuptiSubscribe_v2(&subscriber, &no_callback, nullptr, &params);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    throw std::runtime_error(
        fmt::format("another CUPTI client holds the device ({}); a profiler or debugger such as "
                    "Nsight Systems, Nsight Compute or cuda-gdb is attached",
                    holder[0] != '\0' ? holder : "unnamed"));
  check(r, "cuptiSubscribe");
  subscriber_ = subscriber;
}

void Collector::stop() {
  if (!enabled_.load()) return;
  // Device records are complete only once their work is: wait for it before the last flush.
  if (const auto e = cudaDeviceSynchronize(); e != cudaSuccess)
    warn(
        "cudaDeviceSynchronize before the final flush failed ({}: {}); records of unfinished work "
        "may be missing",
        cudaGetErrorName(e), cudaGetErrorString(e));
  flush();
  disable();
  flush();  // what other threads recorded between the first flush and disable()
  release();
  merge();
}

void Collector::flush() noexcept {
  if (const auto r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
    warn("cuptiActivityFlushAll failed: {}; records still in CUPTI's buffers are lost", describe(r));
}

void Collector::disable() noexcept {
  for (const auto kind : enabled_kinds_)
    if (const auto r = cuptiActivityDisable(static_cast<CUpti_ActivityKind>(kind)); r != CUPTI_SUCCESS)
      warn("cuptiActivityDisable({}) failed: {}", kind_name(static_cast<CUpti_ActivityKind>(kind)), describe(r));
  enabled_kinds_.clear();
}

void Collector::release() noexcept {
  if (subscriber_ != nullptr) {
    if (const auto r = cuptiUnsubscribe(subscriber_); r != CUPTI_SUCCESS)
      warn("cuptiUnsubscribe failed: {}", describe(r));
    subscriber_ = nullptr;
  }
  enabled_.store(false);
  Collector* self = this;
  active.compare_exchange_strong(self, nullptr);
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

// Staged string ids to the trace's: each name used is interned there once.
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

void Collector::merge() {
  auto staging = std::make_unique<Staging>();
  {
    std::lock_guard lock(staging_->mutex);
    staging.swap(staging_);
  }
  auto& r = staging->records;
  std::sort(r.api_calls.begin(), r.api_calls.end(), by_correlation);
  join_threads(r.syncs, r.api_calls);
  sort_by_time(r.api_calls);
  sort_by_time(r.kernels);
  sort_by_time(r.copies);
  sort_by_time(r.memsets);
  sort_by_time(r.syncs);

  Names names(r.strings, trace_.strings);
  for (auto& k : r.kernels) {
    k.name = names.demangled(k.mangled);
    k.mangled = names.global(k.mangled);
  }
  trace_.kernels.insert(trace_.kernels.end(), r.kernels.begin(), r.kernels.end());
  append(trace_.api_calls, r.api_calls, names);
  append(trace_.copies, r.copies, names);
  append(trace_.memsets, r.memsets, names);
  append(trace_.syncs, r.syncs, names);

  // CUPTI could not time these (it documents this for lack of device memory); kept, but said.
  if (const auto untimed = std::count_if(r.kernels.begin(), r.kernels.end(),
                                         [](const trace::Kernel& k) { return k.start == 0 && k.end == 0; });
      untimed > 0)
    warn("{} kernels have no timestamps (CUPTI could not collect them); their durations read as 0", untimed);

  trace_.collection.dropped_records += staging->dropped;
  trace_.collection.device_traced = true;
  trace_.collection.device_unavailable.clear();
}

}  // namespace expr::cupti
