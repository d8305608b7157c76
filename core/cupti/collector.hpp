// The device side of a trace, from the CUPTI Activity API: runtime and driver API calls (those that
// only read state left out), kernels, memory copies, memsets, synchronizations and the driver's
// allocations and releases, stamped with the
// trace clock (trace::now()) and the system's thread ids (gettid), so trace::link() can place each API call
// inside the host ranges of its thread by time.
//
// The collector composes two parts: cupti::ActivityApi (activity_api.hpp), which drives CUPTI and
// hands on the record buffers it fills, and cupti::Decoder (decoder.hpp), which turns their records
// into trace records. CUPTI hands buffers over on its own threads while the host side of the same
// trace is still being recorded, so the decoder keeps what it decodes to itself, and the records
// join the trace only in stop(), after the last buffer is back.
//
// One collector at a time per process: CUPTI itself is one per process.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "trace/trace.hpp"

namespace expr::cupti {

// The API version of the CUPTI library loaded (cuptiGetVersion), "" when it cannot say.
std::string api_version();

class ActivityApi;
class Decoder;
struct CompletedBuffer;

class Collector final {
 public:
  explicit Collector(trace::Trace& trace);
  ~Collector();  // disables anything still enabled; never throws
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // Enables collection. On failure (no driver or device, another CUPTI client such as Nsight
  // attached, insufficient privileges, ...) returns false, writes a one-line reason into
  // trace.collection.device_unavailable, leaves device_traced false, and the run goes on.
  bool start();
  // Waits for the device (cudaDeviceSynchronize), flushes every buffer, disables collection and
  // appends all records to the trace: api_calls, kernels, copies, memsets, syncs, each sorted by
  // start time, and the driver's memory events; sets device_traced (and driver_memory_traced when
  // CUPTI recorded allocations) and adds to dropped_records. Does nothing unless started.
  void stop();

 private:
  bool unavailable(std::string reason);
  void decode(const CompletedBuffer& buffer);
  void prime();
  void merge();

  trace::Trace& trace_;
  std::mutex mutex_;                  // guards decoder_: buffers may complete on several CUPTI threads
  std::unique_ptr<Decoder> decoder_;  // swapped for a fresh one in merge()
  std::unique_ptr<ActivityApi> api_;  // declared last, destroyed first: its final flush still finds decoder_
};

}  // namespace expr::cupti
