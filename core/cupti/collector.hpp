// The device side of a trace, from the CUPTI Activity API: runtime and driver API calls (those that
// only read state left out), kernels, memory copies, memsets and synchronizations, stamped with the
// trace clock (trace::now()) and the system's thread ids (gettid), so trace::link() can place each API call
// inside the host ranges of its thread by time.
//
// CUPTI hands its records over in buffers, on its own threads, while the host side of the same
// trace is still being recorded. So the collector decodes records into a staging area it owns and
// appends them to the trace only in stop(), after the last buffer is back.
//
// One collector at a time per process: CUPTI itself is one per process, and its buffer and
// timestamp callbacks carry no user pointer, so they reach the collector through a static pointer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "trace/trace.hpp"

struct CUpti_Subscriber_st;  // cupti_callbacks.h: CUpti_SubscriberHandle

namespace expr::cupti {

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
  // start time; sets device_traced and adds to dropped_records. Does nothing unless started.
  void stop();

 private:
  class Buffers;            // the record buffers lent to CUPTI (collector.cpp)
  struct Staging;           // records decoded from the buffers, until stop() (collector.cpp)
  friend struct Callbacks;  // the C callbacks CUPTI calls (collector.cpp)

  void enable();
  void leave_out_queries();
  void prime();
  void subscribe();
  void disable() noexcept;
  void flush() noexcept;
  void release() noexcept;
  void merge();

  trace::Trace& trace_;
  std::atomic<bool> enabled_{false};
  CUpti_Subscriber_st* subscriber_ = nullptr;
  std::vector<int> enabled_kinds_;  // CUpti_ActivityKind values, to disable exactly these
  std::unique_ptr<Buffers> buffers_;
  std::unique_ptr<Staging> staging_;
};

}  // namespace expr::cupti
