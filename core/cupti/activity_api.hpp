// The thin layer over CUPTI's Activity API, and the only code that drives CUPTI: it claims CUPTI
// for the process, has records stamped with a given clock and the system thread id, enables the
// activity kinds, leaves out API calls that only read state, lends CUPTI record buffers and hands
// each completed one on with the count of records CUPTI dropped, flushes, and lets go. It knows no
// trace type: what the records mean is cupti::Decoder's business (cupti/decoder.hpp).
//
// CUPTI is one per process and its buffer callbacks carry no user pointer, so one ActivityApi at a
// time claims it, and the callbacks find that one through a static pointer.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace expr::cupti {

// A buffer CUPTI filled and gave back: records up to valid_bytes, and how many records CUPTI
// dropped for want of a buffer on the context and stream the buffer came from.
struct CompletedBuffer {
  std::uint8_t* records = nullptr;
  std::size_t valid_bytes = 0;
  std::size_t dropped_records = 0;
};

// The record after `previous` in `buffer` (the first one for nullptr), or nullptr after the last,
// read with cuptiActivityGetNextRecord, which needs no driver. A record CUPTI cannot read (its work
// had not finished at a forced flush) ends the buffer, with a warning.
CUpti_Activity* next_record(const CompletedBuffer& buffer, CUpti_Activity* previous);

// A runtime or driver API function as CUPTI's callback table names it ("cudaLaunchKernel_v7000",
// "cuLaunchKernelEx"); nullptr for an id it does not know.
const char* callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId id);

struct ApiFunction {
  CUpti_CallbackId id = 0;
  std::string_view name;  // CUPTI's own, static
};

// The functions of the runtime or driver API that only read state (names with Get, Query, Peek or
// IsCapturing), which CUPTI is told not to record.
std::vector<ApiFunction> query_functions(CUpti_CallbackDomain domain);

class ActivityApi final {
 public:
  // Gets every buffer that comes back, on CUPTI's threads (possibly several at once); the buffer is
  // reused once the sink returns. An exception from the sink loses that buffer's records.
  using BufferSink = std::function<void(const CompletedBuffer&)>;

  explicit ActivityApi(BufferSink sink);
  ~ActivityApi();  // release()
  ActivityApi(const ActivityApi&) = delete;
  ActivityApi& operator=(const ActivityApi&) = delete;

  // Makes this the process's one ActivityApi, the one CUPTI's callbacks reach; false when another
  // one already is.
  bool claim();
  // Subscribes (which is how another CUPTI client, a profiler or debugger, is detected), has every
  // record stamped with `clock` and the system thread id (gettid), lends CUPTI buffers, enables the
  // kinds Decoder reads and leaves out query_functions(). Needs claim(). On failure throws
  // std::runtime_error with a one-line reason, and release() undoes what was done.
  void enable(CUpti_TimestampCallbackFunc clock);
  bool enabled() const { return enabled_; }
  // Whether the last enable() got the driver's allocation records (MEMORY2, optional).
  bool records_memory() const { return records_memory_; }
  // Hands every buffer holding records to the sink, full or not.
  void flush() noexcept;
  // Disables the kinds, flushes what they recorded up to then, unsubscribes and gives up the claim.
  // Safe in any state; never throws.
  void release() noexcept;

 private:
  class Buffers;  // the buffers lent to CUPTI (activity_api.cpp)

  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  static void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                        std::size_t size, std::size_t valid_bytes);

  void subscribe();
  void enable_kinds();
  void disable() noexcept;

  BufferSink sink_;
  std::unique_ptr<Buffers> buffers_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::vector<CUpti_ActivityKind> enabled_kinds_;  // to disable exactly these
  bool enabled_ = false;
  bool records_memory_ = false;
};

}  // namespace expr::cupti
