// The normalized trace: one in-memory model that every analysis, guess and export reads.
//
// Host side (iterations, plugin ranges, framework ops) and device side (API calls, kernels, copies,
// memsets, synchronizations) share one clock: nanoseconds of the steady (monotonic) clock, which
// the CUPTI collector also uses for its records. Records refer to each other by index into their
// vectors; link() fills those indices from correlation ids after collection or loading.
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace expr::trace {

using Ns = std::int64_t;
using StringId = std::uint32_t;
inline constexpr std::int32_t none = -1;

// Names repeat (the same kernel launched thousands of times): store each once.
class Strings {
 public:
  StringId intern(std::string_view s);
  const std::string& operator[](StringId id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }
  const std::vector<std::string>& all() const { return strings_; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> strings_;
  std::unordered_map<std::string, StringId, Hash, std::equal_to<>> ids_;
};

enum class RangeKind : std::uint8_t { iteration, plugin, op };

struct HostRange {
  StringId name = 0;
  RangeKind kind = RangeKind::plugin;
  std::uint32_t thread = 0;
  Ns start = 0;
  Ns end = 0;
  std::int32_t parent = none;     // enclosing range on the same thread
  std::int32_t iteration = none;  // traced iteration it was opened in
};

enum class Api : std::uint8_t { runtime, driver };

struct ApiCall {
  StringId name = 0;  // e.g. cudaLaunchKernel, cuLaunchKernelEx
  Api api = Api::runtime;
  std::uint32_t thread = 0;
  Ns start = 0;
  Ns end = 0;
  std::uint32_t correlation = 0;
  // Filled by link().
  std::int32_t range = none;      // the innermost host range of its thread around it
  std::int32_t iteration = none;
};

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t volume() const { return std::uint64_t{x} * y * z; }
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

// What a kernel asked of the multiprocessor when it was launched.
struct Footprint {
  Dim3 grid, block, cluster;
  std::uint32_t registers_per_thread = 0;
  std::uint32_t static_shared = 0;   // bytes per block
  std::uint32_t dynamic_shared = 0;  // bytes per block
  std::uint32_t local_per_thread = 0;
  std::uint32_t shared_executed = 0;  // shared memory carveout the driver configured, bytes per SM
  std::uint32_t shared_per_block() const { return static_shared + dynamic_shared; }
};

// Fields common to everything that ran on the device.
struct DeviceSpan {
  StringId name = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  Ns start = 0;
  Ns end = 0;
  std::uint32_t correlation = 0;
  std::int32_t api_call = none;   // filled by link()
  std::int32_t iteration = none;  // filled by link()
  Ns duration() const { return end - start; }
};

struct Kernel : DeviceSpan {
  StringId mangled = 0;
  Footprint footprint;
};

enum class CopyKind : std::uint8_t { unknown, HtoD, DtoH, HtoA, AtoH, AtoA, AtoD, DtoA, DtoD, HtoH, PtoP };
std::string_view to_string(CopyKind kind);
CopyKind copy_kind_from(std::string_view name);  // unknown when the name is not a kind

struct Copy : DeviceSpan {
  CopyKind kind = CopyKind::unknown;
  std::uint64_t bytes = 0;
};

struct Memset : DeviceSpan {
  std::uint64_t bytes = 0;
  std::uint32_t value = 0;
};

// A host thread waiting for the device (stream, event or context synchronization).
struct Synchronization {
  StringId name = 0;  // e.g. "stream", "event", "context"
  std::uint32_t thread = 0;
  std::uint32_t stream = 0;
  Ns start = 0;
  Ns end = 0;
  std::uint32_t correlation = 0;
};

struct Iteration {
  std::int32_t range = none;  // its HostRange
  Ns start = 0;
  Ns end = 0;
};

// The device properties occupancy is computed from, recorded with the trace so replay can redo it.
struct DeviceProperties {
  std::uint32_t id = 0;
  std::string name;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  int warp_size = 32;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int registers_per_sm = 0;
  int max_registers_per_block = 0;
  int shared_per_sm = 0;             // bytes usable by blocks
  int shared_per_block_optin = 0;    // bytes one block may opt in to
  int reserved_shared_per_block = 0; // bytes the system keeps per resident block
};

// How the device side of the trace was collected, and what went missing.
struct Collection {
  bool device_traced = false;
  std::string device_unavailable;  // why there is no device side, when there is none
  bool ops_traced = false;         // a framework op observer was on
  std::uint64_t dropped_records = 0;
  std::uint64_t unattributed = 0;  // device records link() could not place in an iteration
};

struct Trace {
  Strings strings;
  std::vector<Iteration> iterations;
  std::vector<HostRange> ranges;
  std::vector<ApiCall> api_calls;
  std::vector<Kernel> kernels;
  std::vector<Copy> copies;
  std::vector<Memset> memsets;
  std::vector<Synchronization> syncs;
  std::vector<DeviceProperties> devices;
  Collection collection;
  std::uint32_t process = 0;  // pid of the worker that recorded it

  const DeviceProperties* device(std::uint32_t id) const;
  std::size_t record_count() const;
  Ns earliest() const;  // the first start of any record; 0 for an empty trace
};

// Joins device records to the API calls that launched them (by correlation id), and each API call
// to the innermost host range open on its thread when it was made (host ranges and API calls share
// the clock and the thread ids), and so to an iteration. A call inside no range of its thread (a
// library's own thread, say) belongs to the iteration whose interval contains it.
void link(Trace& trace);

}  // namespace expr::trace
