// CUPTI's Activity API behind cupti::ActivityApi: subscription, activity kinds, record buffers and
// their callbacks, flushes.
#include "cupti/activity_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "cupti/log.hpp"

namespace expr::cupti {

namespace {

// Records are written into buffers lent to CUPTI. 8 MiB holds some 50 000 records, so a buffer
// comes back rarely; the cap bounds memory should records outpace processing, and past it CUPTI
// drops records and counts them (cuptiActivityGetNumDroppedRecords), which the sink is told.
constexpr std::size_t buffer_size = std::size_t{8} << 20;
constexpr std::size_t max_buffers = 64;
constexpr std::size_t buffer_alignment = 8;  // CUPTI's ACTIVITY_RECORD_ALIGNMENT

// The kinds cupti::Decoder reads, in the record versions it reads them as.
constexpr std::array required_kinds{
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,          CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,          CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
// Kernels the driver launches outside any public API call (libraries such as cuBLAS do this):
// without these records such kernels have no launching call, so no iteration. Optional, since it
// only adds attribution.
constexpr auto internal_launch_kind = CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API;
// The driver's allocations and releases, for the driver_* memory figures. Optional too: without
// them only those figures are missing.
constexpr auto memory_kind = CUPTI_ACTIVITY_KIND_MEMORY2;

// The buffer callbacks carry no user pointer, so they find the claiming ActivityApi here.
std::atomic<ActivityApi*> active{nullptr};

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
    case CUPTI_ACTIVITY_KIND_MEMORY2: return "MEMORY2";
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

}  // namespace

CUpti_Activity* next_record(const CompletedBuffer& buffer, CUpti_Activity* previous) {
  CUpti_Activity* record = previous;
  const auto r = cuptiActivityGetNextRecord(buffer.records, buffer.valid_bytes, &record);
  if (r == CUPTI_SUCCESS) return record;
  if (r != CUPTI_ERROR_MAX_LIMIT_REACHED)
    warn("a record buffer ends in a record that cannot be read ({}); the rest is lost", describe(r));
  return nullptr;
}

const char* callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId id) {
  const char* name = nullptr;
  return cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS ? name : nullptr;
}

std::vector<ApiFunction> query_functions(CUpti_CallbackDomain domain) {
  const CUpti_CallbackId end = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? CUPTI_RUNTIME_TRACE_CBID_SIZE
                               : domain == CUPTI_CB_DOMAIN_DRIVER_API ? CUPTI_DRIVER_TRACE_CBID_SIZE
                                                                      : 0;
  std::vector<ApiFunction> queries;
  for (CUpti_CallbackId id = 1; id < end; ++id)  // 0 is each domain's INVALID
    if (const char* name = callback_name(domain, id); name != nullptr && is_query(name)) queries.push_back({id, name});
  return queries;
}

// ---- The buffers lent to CUPTI -----------------------------------------------------------------

class ActivityApi::Buffers {
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

// ---- The callbacks CUPTI calls; exceptions must not cross into CUPTI, hence the catch-alls -------

void CUPTIAPI ActivityApi::buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;  // as many as fit
  try {
    if (ActivityApi* api = active.load(std::memory_order_acquire)) *buffer = api->buffers_->take();
    if (*buffer != nullptr) *size = buffer_size;
  } catch (...) {
    warn("could not lend a record buffer; records are dropped and counted");
  }
}

void CUPTIAPI ActivityApi::buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                            std::size_t, std::size_t valid_bytes) {
  std::size_t dropped = 0;
  if (const auto r = cuptiActivityGetNumDroppedRecords(context, stream, &dropped); r != CUPTI_SUCCESS)
    warn("cuptiActivityGetNumDroppedRecords failed: {}", describe(r));
  ActivityApi* api = active.load(std::memory_order_acquire);
  if (api == nullptr) {
    // release() flushes before it lets go, so this means a record buffer outlived its ActivityApi.
    warn("a record buffer ({} bytes, {} records dropped) came back with no collector; it is lost", valid_bytes,
         dropped);
    std::free(buffer);
    return;
  }
  try {
    api->sink_(CompletedBuffer{buffer, valid_bytes, dropped});
  } catch (...) {
    warn("a record buffer could not be processed; its records are lost");
  }
  api->buffers_->give(buffer);
}

// ---- Enabling and letting go ---------------------------------------------------------------------

ActivityApi::ActivityApi(BufferSink sink) : sink_(std::move(sink)), buffers_(std::make_unique<Buffers>()) {}

ActivityApi::~ActivityApi() { release(); }

bool ActivityApi::claim() {
  ActivityApi* none = nullptr;
  return active.compare_exchange_strong(none, this);
}

void ActivityApi::enable(CUpti_TimestampCallbackFunc clock) {
  subscribe();
  // CUPTI's default thread id on Linux is pthread_self(); the system one is gettid(), which is what
  // trace::current_thread() records for host ranges. Must be set before any record is made.
  check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType(SYSTEM)");
  // Before any kind is enabled, so that every record is stamped with this clock.
  check(cuptiActivityRegisterTimestampCallback(clock), "cuptiActivityRegisterTimestampCallback");
  check(cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed), "cuptiActivityRegisterCallbacks");
  enable_kinds();
  const auto leave_out = [](CUpti_CallbackDomain domain, CUptiResult (*enable)(CUpti_CallbackId, std::uint8_t)) {
    for (const auto& function : query_functions(domain))
      if (const auto r = enable(function.id, 0); r != CUPTI_SUCCESS)
        warn("cannot leave {} out of the trace: {}", function.name, describe(r));
  };
  leave_out(CUPTI_CB_DOMAIN_RUNTIME_API, &cuptiActivityEnableRuntimeApi);
  leave_out(CUPTI_CB_DOMAIN_DRIVER_API, &cuptiActivityEnableDriverApi);
  enabled_ = true;
}

void ActivityApi::subscribe() {
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

void ActivityApi::enable_kinds() {
  for (const auto kind : required_kinds) {
    check(cuptiActivityEnable(kind), fmt::format("cuptiActivityEnable({})", kind_name(kind)));
    enabled_kinds_.push_back(kind);
  }
  const auto enable_optional = [&](CUpti_ActivityKind kind, std::string_view without) {
    if (const auto r = cuptiActivityEnable(kind); r == CUPTI_SUCCESS)
      enabled_kinds_.push_back(kind);
    else
      warn("cuptiActivityEnable({}) failed: {}; {}", kind_name(kind), describe(r), without);
  };
  enable_optional(internal_launch_kind, "kernels launched inside libraries may have no launching API call");
  enable_optional(memory_kind, "the driver's allocations are not traced (no driver_* memory figures)");
  records_memory_ = std::find(enabled_kinds_.begin(), enabled_kinds_.end(), memory_kind) != enabled_kinds_.end();
}

void ActivityApi::flush() noexcept {
  if (const auto r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
    warn("cuptiActivityFlushAll failed: {}; records still in CUPTI's buffers are lost", describe(r));
}

void ActivityApi::disable() noexcept {
  for (const auto kind : enabled_kinds_)
    if (const auto r = cuptiActivityDisable(kind); r != CUPTI_SUCCESS)
      warn("cuptiActivityDisable({}) failed: {}", kind_name(kind), describe(r));
  enabled_kinds_.clear();
}

void ActivityApi::release() noexcept {
  const bool any_enabled = !enabled_kinds_.empty();
  disable();
  if (any_enabled) flush();  // so no stray record reaches a later ActivityApi
  if (subscriber_ != nullptr) {
    if (const auto r = cuptiUnsubscribe(subscriber_); r != CUPTI_SUCCESS)
      warn("cuptiUnsubscribe failed: {}", describe(r));
    subscriber_ = nullptr;
  }
  enabled_ = false;
  ActivityApi* self = this;
  active.compare_exchange_strong(self, nullptr);
}

}  // namespace expr::cupti
