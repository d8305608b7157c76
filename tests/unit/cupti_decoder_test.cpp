// The CUPTI record path without a GPU: records built with CUPTI's own structs and filled as CUPTI
// fills them, decoded by cupti::Decoder, merged into a trace and linked into iterations. Buffers are
// walked with the real cuptiActivityGetNextRecord, which needs libcupti but no driver. Also which API
// calls CUPTI is told to leave out, that one cupti::ActivityApi at a time claims CUPTI, and that the
// collector without a CUDA device says so.
#include <doctest/doctest.h>

#include <cupti.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cupti/activity_api.hpp"
#include "cupti/collector.hpp"
#include "cupti/decoder.hpp"
#include "device/cuda.hpp"
#include "trace/trace.hpp"

using namespace expr;

namespace {

constexpr std::uint32_t main_thread = 4242;

CUpti_ActivityAPI api_call(CUpti_ActivityKind kind, CUpti_CallbackId cbid, std::uint64_t start, std::uint64_t end,
                           std::uint32_t correlation, std::uint32_t thread = main_thread) {
  CUpti_ActivityAPI r{};
  r.kind = kind;
  r.cbid = cbid;
  r.start = start;
  r.end = end;
  r.processId = 17;
  r.threadId = thread;
  r.correlationId = correlation;
  return r;
}

CUpti_ActivityKernel10 kernel(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t correlation) {
  CUpti_ActivityKernel10 r{};
  r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.name = name;
  r.start = start;
  r.end = end;
  r.deviceId = 0;
  r.streamId = 7;
  r.correlationId = correlation;
  r.gridX = r.gridY = r.gridZ = 1;
  r.blockX = r.blockY = r.blockZ = 1;
  return r;  // clusterX, Y, Z 0: CUPTI's "launched without clusters"
}

CUpti_ActivityMemcpy6 copy(CUpti_ActivityMemcpyKind kind, std::uint64_t bytes, std::uint64_t start, std::uint64_t end,
                           std::uint32_t correlation) {
  CUpti_ActivityMemcpy6 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.copyKind = static_cast<std::uint8_t>(kind);
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  r.deviceId = 0;
  r.streamId = 7;
  r.correlationId = correlation;
  return r;
}

CUpti_ActivityMemset4 memset_record(std::uint32_t value, std::uint64_t bytes, std::uint64_t start, std::uint64_t end,
                                    std::uint32_t correlation) {
  CUpti_ActivityMemset4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  r.value = value;
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  r.deviceId = 0;
  r.streamId = 7;
  r.correlationId = correlation;
  return r;
}

CUpti_ActivitySynchronization2 sync(CUpti_ActivitySynchronizationType type, std::uint32_t stream,
                                    std::uint64_t start, std::uint64_t end, std::uint32_t correlation) {
  CUpti_ActivitySynchronization2 r{};
  r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  r.type = type;
  r.streamId = stream;
  r.start = start;
  r.end = end;
  r.correlationId = correlation;
  return r;
}

CUpti_ActivityMemory4 memory_record(CUpti_ActivityMemoryOperationType operation, CUpti_ActivityMemoryKind kind, std::uint64_t bytes,
                                    std::uint64_t timestamp, std::uint32_t correlation) {
  CUpti_ActivityMemory4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = operation;
  r.memoryKind = kind;
  r.bytes = bytes;
  r.address = 0x7f0000000000;
  r.timestamp = timestamp;
  r.deviceId = 1;
  r.correlationId = correlation;
  return r;
}

// One record handed to the decoder as CUPTI hands it over: a CUpti_Activity to switch on.
template <class Record>
void add(cupti::Decoder& decoder, const Record& record) {
  decoder.add(reinterpret_cast<const CUpti_Activity&>(record));
}

// A record buffer laid out as CUPTI fills one: records back to back at 8-byte boundaries.
class RecordBuffer {
 public:
  template <class Record>
  RecordBuffer& operator<<(const Record& record) {
    static_assert(sizeof(Record) % sizeof(std::uint64_t) == 0, "CUPTI records are 8-byte aligned");
    const auto at = words_.size();
    words_.resize(at + sizeof(Record) / sizeof(std::uint64_t));
    std::memcpy(&words_[at], &record, sizeof record);
    return *this;
  }
  cupti::CompletedBuffer completed(std::size_t dropped_records = 0) {
    return {reinterpret_cast<std::uint8_t*>(words_.data()), words_.size() * sizeof(std::uint64_t), dropped_records};
  }

 private:
  std::vector<std::uint64_t> words_;
};

trace::Trace merged(cupti::Decoder&& decoder) {
  trace::Trace t;
  std::move(decoder).merge_into(t);
  return t;
}

std::string_view name_of(const trace::Trace& t, trace::StringId id) { return t.strings[id]; }

}  // namespace

TEST_CASE("a kernel keeps its name, times, ids and launch footprint") {
  auto k = kernel("_Z10add_kernelPfPKfi", 1000, 3000, 42);
  k.deviceId = 1;
  k.streamId = 13;
  k.gridX = 128, k.gridY = 2, k.gridZ = 3;
  k.blockX = 256, k.blockY = 2, k.blockZ = 1;
  k.clusterX = 2, k.clusterY = 1, k.clusterZ = 1;
  k.registersPerThread = 255;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 49152;
  k.localMemoryPerThread = 16;
  k.sharedMemoryExecuted = 233472;
  cupti::Decoder decoder;
  add(decoder, k);
  const auto t = merged(std::move(decoder));

  REQUIRE(t.kernels.size() == 1);
  const auto& out = t.kernels[0];
  CHECK(name_of(t, out.name) == "add_kernel(float*, float const*, int)");
  CHECK(name_of(t, out.mangled) == "_Z10add_kernelPfPKfi");
  CHECK(out.device == 1);
  CHECK(out.stream == 13);
  CHECK(out.start == 1000);
  CHECK(out.end == 3000);
  CHECK(out.correlation == 42);
  CHECK(out.api_call == trace::none);  // link()'s job
  const auto& f = out.footprint;
  CHECK(f.grid == trace::Dim3{128, 2, 3});
  CHECK(f.block == trace::Dim3{256, 2, 1});
  CHECK(f.cluster == trace::Dim3{2, 1, 1});
  CHECK(f.registers_per_thread == 255);
  CHECK(f.static_shared == 1024);
  CHECK(f.dynamic_shared == 49152);
  CHECK(f.local_per_thread == 16);
  CHECK(f.shared_executed == 233472);
}

TEST_CASE("a kernel without clusters has a 1 x 1 x 1 cluster, names that do not demangle stay as they are") {
  cupti::Decoder decoder;
  add(decoder, kernel("plain_c_kernel", 100, 200, 1));
  add(decoder, kernel(nullptr, 300, 400, 2));
  const auto t = merged(std::move(decoder));

  REQUIRE(t.kernels.size() == 2);
  CHECK(t.kernels[0].footprint.cluster == trace::Dim3{1, 1, 1});
  CHECK(name_of(t, t.kernels[0].name) == "plain_c_kernel");
  CHECK(name_of(t, t.kernels[0].mangled) == "plain_c_kernel");
  CHECK(name_of(t, t.kernels[1].name) == "(unnamed kernel)");
}

TEST_CASE("API calls: runtime names lose their version, driver names keep theirs, internal launches are named, cbids are kept") {
  cupti::Decoder decoder;
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 100, 150, 1));
  add(decoder,
      api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, 200, 250, 2, 77));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, 300, 350, 3));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 400, 450, 4));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, 0, 500, 550, 5));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_RUNTIME, 60000, 600, 650, 6));  // an id this CUPTI does not know
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_DRIVER, 60000, 700, 750, 7));
  const auto t = merged(std::move(decoder));

  struct Expected {
    std::string_view name;
    trace::Api api;
    std::uint32_t cbid;  // CUPTI's, as the PyTorch profiler's traces give it
  };
  const std::vector<Expected> expected{
      {"cudaLaunchKernel", trace::Api::runtime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
      {"cudaLaunchKernelExC", trace::Api::runtime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060},
      {"cuMemcpyDtoH_v2", trace::Api::driver, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2},
      {"cuLaunchKernelEx", trace::Api::driver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx},
      {"(internal launch)", trace::Api::driver, 0},
      {"(runtime API call 60000)", trace::Api::runtime, 60000},
      {"(driver API call 60000)", trace::Api::driver, 60000},
  };
  REQUIRE(t.api_calls.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& call = t.api_calls[i];
    CAPTURE(i);
    CHECK(name_of(t, call.name) == expected[i].name);
    CHECK(call.api == expected[i].api);
    CHECK(call.cbid == expected[i].cbid);
    CHECK(call.start == static_cast<trace::Ns>(100 * (i + 1)));
    CHECK(call.end == static_cast<trace::Ns>(100 * (i + 1) + 50));
    CHECK(call.correlation == i + 1);
    CHECK(call.thread == (i == 1 ? 77u : main_thread));
    CHECK(call.range == trace::none);
    CHECK(call.iteration == trace::none);
  }
}

TEST_CASE("copies keep their kind, bytes, stream and ids, and are named by kind") {
  struct Case {
    CUpti_ActivityMemcpyKind cupti;
    trace::CopyKind kind;
    std::string_view name;
  };
  const std::vector<Case> cases{
      {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, trace::CopyKind::unknown, "Memcpy unknown"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, trace::CopyKind::HtoD, "Memcpy HtoD"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, trace::CopyKind::DtoH, "Memcpy DtoH"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, trace::CopyKind::HtoA, "Memcpy HtoA"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, trace::CopyKind::AtoH, "Memcpy AtoH"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, trace::CopyKind::AtoA, "Memcpy AtoA"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, trace::CopyKind::AtoD, "Memcpy AtoD"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, trace::CopyKind::DtoA, "Memcpy DtoA"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, trace::CopyKind::DtoD, "Memcpy DtoD"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, trace::CopyKind::HtoH, "Memcpy HtoH"},
      {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, trace::CopyKind::PtoP, "Memcpy PtoP"},
  };
  cupti::Decoder decoder;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto c = copy(cases[i].cupti, 1000 + i, 10 * i, 10 * i + 5, static_cast<std::uint32_t>(i));
    c.deviceId = 2;
    add(decoder, c);
  }
  const auto t = merged(std::move(decoder));

  REQUIRE(t.copies.size() == cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& out = t.copies[i];
    CAPTURE(cases[i].name);
    CHECK(out.kind == cases[i].kind);
    CHECK(name_of(t, out.name) == cases[i].name);
    CHECK(out.bytes == 1000 + i);
    CHECK(out.device == 2);
    CHECK(out.stream == 7);
    CHECK(out.start == static_cast<trace::Ns>(10 * i));
    CHECK(out.end == static_cast<trace::Ns>(10 * i + 5));
    CHECK(out.correlation == i);
  }
}

TEST_CASE("memsets keep their value, bytes, stream and ids") {
  cupti::Decoder decoder;
  add(decoder, memset_record(0xAB, 4, 900, 910, 15));
  const auto t = merged(std::move(decoder));

  REQUIRE(t.memsets.size() == 1);
  const auto& out = t.memsets[0];
  CHECK(name_of(t, out.name) == "Memset");
  CHECK(out.value == 0xAB);
  CHECK(out.bytes == 4);
  CHECK(out.device == 0);
  CHECK(out.stream == 7);
  CHECK(out.start == 900);
  CHECK(out.end == 910);
  CHECK(out.correlation == 15);
}

TEST_CASE("the driver's allocations and releases are signed sizes, on the device or in host memory, in time order") {
  cupti::Decoder decoder;
  add(decoder, memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 2 << 20, 900, 12));
  add(decoder, memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 2 << 20, 500, 11));
  add(decoder, memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 4096, 700, 13));
  add(decoder, memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1, 800, 14));
  const auto t = merged(std::move(decoder));
  REQUIRE(t.memory.size() == 3);  // an operation that is neither is not a change of memory
  CHECK(t.memory[0].source == trace::MemorySource::driver);
  CHECK(t.memory[0].time == 500);
  CHECK(t.memory[0].bytes == 2 << 20);
  CHECK(t.memory[0].device == 1);
  CHECK(t.memory[0].correlation == 11);
  CHECK(t.memory[0].address == 0x7f0000000000);
  CHECK(t.memory[0].total_allocated == -1);  // the driver does not say
  CHECK(t.memory[1].device == -1);           // pinned host memory
  CHECK(t.memory[2].bytes == -(2 << 20));
}

TEST_CASE("synchronizations are named by type and take the thread of their API call") {
  cupti::Decoder decoder;
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 100, 300,
                        1, 11));
  add(decoder, sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 7, 110, 290, 1));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, 400, 500,
                        2, 12));
  add(decoder, sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, CUPTI_SYNCHRONIZATION_INVALID_VALUE, 410,
                    490, 2));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 600, 610,
                        3, 13));
  add(decoder, sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 8, 601, 609, 3));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 700, 800,
                        4, 14));
  add(decoder, sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, CUPTI_SYNCHRONIZATION_INVALID_VALUE,
                    710, 790, 4));
  add(decoder, sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN, 9, 900, 950, 5));  // no API call recorded
  const auto t = merged(std::move(decoder));

  struct Expected {
    std::string_view name;
    std::uint32_t thread, stream;
    trace::Ns start, end;
  };
  const std::vector<Expected> expected{
      {"stream", 11, 7, 110, 290},
      {"event", 12, CUPTI_SYNCHRONIZATION_INVALID_VALUE, 410, 490},
      {"stream wait event", 13, 8, 601, 609},
      {"context", 14, CUPTI_SYNCHRONIZATION_INVALID_VALUE, 710, 790},
      {"unknown", 0, 9, 900, 950},
  };
  REQUIRE(t.syncs.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& out = t.syncs[i];
    CAPTURE(expected[i].name);
    CHECK(name_of(t, out.name) == expected[i].name);
    CHECK(out.thread == expected[i].thread);
    CHECK(out.stream == expected[i].stream);
    CHECK(out.start == expected[i].start);
    CHECK(out.end == expected[i].end);
    CHECK(out.correlation == i + 1);
  }
}

TEST_CASE("merging sorts by start time, puts the runtime call first, interns each name used once") {
  trace::Trace t;
  const auto step = t.strings.intern("ProfilerStep#0");
  t.collection.dropped_records = 5;
  t.collection.device_unavailable = "not yet";

  cupti::Decoder decoder;
  add(decoder, kernel("_Z1kv", 900, 1000, 3));
  add(decoder, kernel("_Z1kv", 500, 600, 2));
  // A driver call made by a runtime call, sharing its start and correlation id, recorded first.
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 400, 450, 2));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 400, 460, 2));
  add(decoder, api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 800, 860, 3));
  add(decoder, copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 64, 700, 710, 4));
  add(decoder, copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 64, 300, 310, 1));
  std::move(decoder).merge_into(t);

  CHECK(t.strings[step] == "ProfilerStep#0");
  REQUIRE(t.kernels.size() == 2);
  CHECK(t.kernels[0].start == 500);
  CHECK(t.kernels[1].start == 900);
  CHECK(t.kernels[0].name == t.kernels[1].name);
  CHECK(t.kernels[0].mangled == t.kernels[1].mangled);
  CHECK(name_of(t, t.kernels[0].name) == "k()");
  REQUIRE(t.api_calls.size() == 3);
  CHECK(t.api_calls[0].api == trace::Api::runtime);
  CHECK(t.api_calls[1].api == trace::Api::driver);
  CHECK(t.api_calls[0].name == t.api_calls[2].name);
  REQUIRE(t.copies.size() == 2);
  CHECK(t.copies[0].correlation == 1);
  CHECK(t.copies[1].correlation == 4);
  CHECK(t.copies[0].name == t.copies[1].name);

  // Only names in use reach the trace: no "Memcpy HtoD", no "Memset", no sync names.
  const auto& all = t.strings.all();
  CHECK(std::count(all.begin(), all.end(), "Memcpy DtoD") == 1);
  CHECK(std::count(all.begin(), all.end(), "Memcpy HtoD") == 0);
  CHECK(std::count(all.begin(), all.end(), "Memset") == 0);
  CHECK(std::count(all.begin(), all.end(), "_Z1kv") == 1);
  CHECK(all.size() == 6);  // ProfilerStep#0, k(), _Z1kv, cuLaunchKernel, cudaLaunchKernel, Memcpy DtoD

  CHECK(t.collection.device_traced);
  CHECK(t.collection.device_unavailable.empty());
  CHECK(t.collection.dropped_records == 5);
}

TEST_CASE("a buffer of several kinds is walked as CUPTI walks it, dropped records counted") {
  CUpti_ActivityMarker2 marker{};  // a kind the collector does not enable: skipped
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  RecordBuffer first;
  first << api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 100, 150, 1)
        << api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 200, 250, 2) << marker
        << kernel("_Z1kv", 300, 400, 1) << copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 8, 500, 600, 3);
  RecordBuffer second;
  second << memset_record(0, 4, 700, 710, 4) << api_call(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, 0, 720, 730, 5)
         << kernel("_Z1kv", 740, 800, 5)
         << api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 810, 900, 6)
         << sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 7, 820, 890, 6);

  cupti::Decoder decoder;
  decoder.add(first.completed(2));
  decoder.add(second.completed(3));
  const auto t = merged(std::move(decoder));

  CHECK(t.api_calls.size() == 4);
  CHECK(t.kernels.size() == 2);
  CHECK(t.copies.size() == 1);
  CHECK(t.memsets.size() == 1);
  REQUIRE(t.syncs.size() == 1);
  CHECK(t.collection.dropped_records == 5);
  CHECK(name_of(t, t.api_calls[1].name) == "cuLaunchKernelEx");
  CHECK(name_of(t, t.api_calls[2].name) == "(internal launch)");
  CHECK(t.kernels[1].correlation == 5);
  CHECK(t.copies[0].kind == trace::CopyKind::HtoD);
  CHECK(t.syncs[0].thread == main_thread);
}

TEST_CASE("a record CUPTI cannot read ends its buffer, the records before it are kept") {
  CUpti_ActivityAPI unreadable{};  // kind CUPTI_ACTIVITY_KIND_INVALID
  RecordBuffer buffer;
  buffer << kernel("_Z1kv", 100, 200, 1) << unreadable << kernel("_Z1kv", 300, 400, 2);
  cupti::Decoder decoder;
  decoder.add(buffer.completed());
  const auto t = merged(std::move(decoder));

  REQUIRE(t.kernels.size() == 1);
  CHECK(t.kernels[0].correlation == 1);
}

TEST_CASE("discarding the priming records keeps the dropped count") {
  RecordBuffer buffer;
  buffer << api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 10, 20, 1);
  cupti::Decoder decoder;
  decoder.add(buffer.completed(4));
  decoder.discard_records();
  add(decoder, kernel("_Z1kv", 300, 400, 2));
  const auto t = merged(std::move(decoder));

  CHECK(t.api_calls.empty());
  CHECK(t.kernels.size() == 1);
  CHECK(t.collection.dropped_records == 4);
}

TEST_CASE("API calls that only read state are the ones CUPTI is told to leave out") {
  const auto left_out = [](CUpti_CallbackDomain domain) {
    std::set<std::string, std::less<>> names;
    for (const auto& function : cupti::query_functions(domain)) {
      CHECK(function.name == cupti::callback_name(domain, function.id));
      names.emplace(function.name);
    }
    return names;
  };
  const auto check = [](const std::set<std::string, std::less<>>& left_out,
                        std::initializer_list<std::string_view> queries, std::initializer_list<std::string_view> work) {
    for (const auto name : queries) {
      CAPTURE(name);
      CHECK(left_out.contains(name));
    }
    for (const auto name : work) {
      CAPTURE(name);
      CHECK_FALSE(left_out.contains(name));
    }
  };
  check(left_out(CUPTI_CB_DOMAIN_RUNTIME_API),
        {"cudaGetDevice_v3020", "cudaGetLastError_v3020", "cudaPeekAtLastError_v3020", "cudaStreamQuery_v3020",
         "cudaStreamQuery_ptsz_v7000", "cudaStreamIsCapturing_v10000"},
        {"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020",
         "cudaStreamSynchronize_v3020", "cudaDeviceSynchronize_v3020"});
  check(left_out(CUPTI_CB_DOMAIN_DRIVER_API),
        {"cuDevicePrimaryCtxGetState", "cuCtxGetCurrent", "cuStreamQuery", "cuGetProcAddress"},
        {"cuLaunchKernel", "cuLaunchKernelEx", "cuMemcpyDtoH_v2", "cuMemsetD32Async"});
  CHECK(cupti::query_functions(CUPTI_CB_DOMAIN_RESOURCE).empty());
}

TEST_CASE("one ActivityApi at a time claims CUPTI, until it lets go") {
  const auto ignore = [](const cupti::CompletedBuffer&) {};
  cupti::ActivityApi first(ignore), second(ignore);
  REQUIRE(first.claim());
  CHECK_FALSE(second.claim());
  first.release();  // nothing was enabled: touches no CUPTI state, needs no driver
  CHECK(second.claim());
  CHECK_FALSE(first.claim());
  CHECK_FALSE(second.enabled());
}

TEST_CASE("decoded records link into iterations through the host ranges of their thread") {
  trace::Trace t;
  const auto range = [&](std::string_view name, trace::RangeKind kind, trace::Ns start, trace::Ns end,
                         std::int32_t parent, std::int32_t iteration) {
    t.ranges.push_back({t.strings.intern(name), kind, main_thread, start, end, parent, iteration});
    return static_cast<std::int32_t>(t.ranges.size() - 1);
  };
  const auto step0 = range("ProfilerStep#0", trace::RangeKind::iteration, 0, 10'000, trace::none, 0);
  const auto forward0 = range("forward", trace::RangeKind::plugin, 100, 9'000, step0, 0);
  const auto add0 = range("aten::add", trace::RangeKind::op, 200, 900, forward0, 0);
  const auto step1 = range("ProfilerStep#1", trace::RangeKind::iteration, 10'000, 20'000, trace::none, 1);
  const auto forward1 = range("forward", trace::RangeKind::plugin, 10'100, 19'000, step1, 1);
  t.iterations = {{step0, 0, 10'000}, {step1, 10'000, 20'000}};

  constexpr std::uint32_t library_thread = 5151;  // a thread of a library's own, with no host range
  RecordBuffer buffer;
  buffer << api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 300, 400, 1)
         << api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 300, 380, 1)
         << kernel("_Z1kv", 500, 1'500, 1)
         << api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 11'000, 11'100, 2)
         << copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 256, 11'200, 12'000, 2)
         << api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, 12'500, 12'600, 3,
                     library_thread)
         << memset_record(0, 4, 12'700, 12'800, 3)
         << kernel("_Z1kv", 30'000, 31'000, 99);  // its launching call is not in the trace
  cupti::Decoder decoder;
  decoder.add(buffer.completed());
  std::move(decoder).merge_into(t);
  trace::link(t);

  REQUIRE(t.api_calls.size() == 4);
  const auto& launch = t.api_calls[0];
  CHECK(name_of(t, launch.name) == "cudaLaunchKernel");
  CHECK(launch.range == add0);
  CHECK(launch.iteration == 0);
  CHECK(t.api_calls[1].range == add0);  // the driver call it made, on the same thread

  REQUIRE(t.kernels.size() == 2);
  CHECK(t.kernels[0].api_call == 0);
  CHECK(t.kernels[0].iteration == 0);
  CHECK(t.kernels[1].api_call == trace::none);
  CHECK(t.kernels[1].iteration == trace::none);

  const auto& memcpy_call = t.api_calls[2];
  CHECK(memcpy_call.range == forward1);
  REQUIRE(t.copies.size() == 1);
  CHECK(t.copies[0].api_call == 2);
  CHECK(t.copies[0].iteration == 1);

  const auto& memset_call = t.api_calls[3];
  CHECK(memset_call.thread == library_thread);
  CHECK(memset_call.range == trace::none);
  CHECK(memset_call.iteration == 1);  // by time
  REQUIRE(t.memsets.size() == 1);
  CHECK(t.memsets[0].iteration == 1);

  CHECK(t.collection.unattributed == 1);
}

TEST_CASE("without a CUDA device the collector says so and the run can go on") {
  trace::Trace t;
  cupti::Collector collector(t);
  if (cuda::probe().devices == 0) {
    CHECK_FALSE(collector.start());
    CHECK_FALSE(t.collection.device_traced);
    CHECK(t.collection.device_unavailable.starts_with("no CUDA"));
  } else {
    REQUIRE(collector.start());
    collector.stop();
    CHECK(t.collection.device_traced);
  }
}
