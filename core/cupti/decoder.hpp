// CUPTI activity records into trace records: runtime and driver API calls, kernels with their launch
// footprint, copies, memsets, synchronizations and the driver's allocations and releases, their
// names interned. Records come a buffer at a
// time, walked as CUPTI walks them, or one at a time; from cupti::ActivityApi on the GPU, from
// hand-filled CUPTI structs in the unit tests. merge_into() then joins them and appends them to the
// trace.
//
// Not thread-safe: cupti::Collector hands it the buffers CUPTI completes on its threads one at a time.
#pragma once

#include <cupti.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cupti/activity_api.hpp"
#include "trace/trace.hpp"

namespace expr::cupti {

class Decoder final {
 public:
  Decoder();

  // Every record of a completed buffer, in order, and the records CUPTI dropped; a record that
  // cannot be stored (out of memory) counts as dropped too.
  void add(const CompletedBuffer& buffer);
  // One record as CUPTI writes it, in the versions ActivityApi enables: CUpti_ActivityAPI (runtime,
  // driver, internal launch), CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4,
  // CUpti_ActivitySynchronization2 and CUpti_ActivityMemory4. Other kinds are ignored.
  void add(const CUpti_Activity& record);
  // Forgets the records decoded so far, keeping the count of dropped ones.
  void discard_records();
  // Appends the records to `trace`: names interned in its strings, kernel names demangled (the
  // mangled one kept), synchronizations given the thread of their API call, each kind sorted by
  // start time then correlation id (API calls sharing both: the runtime call first, as
  // trace::link() expects), memory events by time. Adds the dropped records and marks the device
  // side traced.
  void merge_into(trace::Trace& trace) &&;

 private:
  static constexpr std::array<std::string_view, 5> sync_names{"unknown", "event", "stream wait event", "stream",
                                                               "context"};

  void decode(const CUpti_ActivityAPI& call);
  void decode(const CUpti_ActivityKernel10& kernel);
  void decode(const CUpti_ActivityMemcpy6& copy);
  void decode(const CUpti_ActivityMemset4& memset);
  void decode(const CUpti_ActivitySynchronization2& sync);
  void decode(const CUpti_ActivityMemory4& memory);
  trace::StringId api_name(trace::Api api, CUpti_CallbackId cbid);
  trace::StringId look_up_api_name(trace::Api api, CUpti_CallbackId cbid);

  // Everything here is cheap per record: vectors that grow amortized, names interned with the
  // transparent hash of trace::Strings (no std::string made for a name seen before), API names
  // cached by callback id. CUPTI's name pointers are never kept.
  trace::Trace records_;  // with strings of its own, interned into the real trace's by merge_into()
  std::array<std::vector<trace::StringId>, 2> api_names_;  // [Api][cbid]: StringId + 1, 0 until looked up
  std::array<trace::StringId, 11> copy_names_{};           // by trace::CopyKind
  std::array<trace::StringId, sync_names.size()> sync_ids_{};
  trace::StringId memset_name_ = 0;
  trace::StringId internal_launch_name_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace expr::cupti
