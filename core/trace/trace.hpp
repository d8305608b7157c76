// The normalized trace: one in-memory model that every analysis, guess and export reads.
//
// Host side (iterations, plugin ranges, framework ops) and device side (API calls, kernels, copies,
// memsets, synchronizations) share one clock: nanoseconds of the steady (monotonic) clock, which
// the CUPTI collector also uses for its records. Records refer to each other by index into their
// vectors; link() fills those indices from correlation ids after collection or loading.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
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
  std::uint32_t cbid = 0;  // CUPTI's callback id in its API's domain; 0 in traces recorded before it was kept
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
  // Hardware counters of this launch, parallel to Trace::counters.metrics; empty for a launch the
  // counters phase did not measure (only the kernels of one traced iteration are measured).
  std::vector<double> counters;
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

// Who saw an allocation or a release. allocator: the framework's allocator, told by the plugin
// (expr_torch reports LibTorch's caching allocator, expr/plugin.hpp's record_allocation); what the
// framework's tensors hold. driver: the CUDA driver, through CUPTI (cudaMalloc, cuMemAlloc, the
// stream-ordered allocator, and their frees); what reaches the device's memory manager, which a
// caching allocator asks only when its cache is short.
enum class MemorySource : std::uint8_t { allocator, driver };
std::string_view to_string(MemorySource source);

// One allocation (bytes > 0) or release (bytes < 0): an instant on the trace's clock.
struct MemoryEvent {
  MemorySource source = MemorySource::allocator;
  std::int32_t device = -1;  // the CUDA device; -1 is host memory
  std::uint32_t thread = 0;  // the allocator's caller; 0 for the driver's records
  Ns time = 0;
  std::int64_t bytes = 0;
  std::uint64_t address = 0;
  // What the allocator holds for tensors, and has reserved from the driver, after this event, as it
  // counts them; -1 where the source does not say (the driver's records).
  std::int64_t total_allocated = -1;
  std::int64_t total_reserved = -1;
  std::uint32_t correlation = 0;  // the driver's records: the API call that made them
  // allocator: the traced iteration open when it was recorded; driver: filled by link(), from
  // its API call.
  std::int32_t iteration = none;
};

struct Iteration {
  std::int32_t range = none;  // its HostRange
  Ns start = 0;
  Ns end = 0;
};

// The device properties occupancy is computed from, recorded with the trace so replay can redo it,
// and those the PyTorch profiler's traces give (report/chrome_trace.hpp). Zero where a trace
// recorded before a property was kept lacks it.
struct DeviceProperties {
  std::uint32_t id = 0;
  std::string name;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  int warp_size = 32;
  std::uint64_t global_memory = 0;  // bytes
  int max_threads_per_block = 0;
  int shared_per_block = 0;         // bytes a block may use without opting in
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
  bool allocator_traced = false;   // the plugin reported its allocator's events (MemorySource::allocator)
  bool driver_memory_traced = false;  // CUPTI recorded the driver's allocations (MemorySource::driver)
  std::uint64_t dropped_records = 0;
  std::uint64_t unattributed = 0;  // device records link() could not place in an iteration
};

// The process's place in a distributed job, when its launcher said (RANK and WORLD_SIZE, as torchrun sets them).
struct Distributed {
  int rank = 0;
  int world_size = 1;
};
// How the counters phase takes the metrics' several passes. kernel: CUPTI replays each kernel
// inside the one counted iteration, saving and restoring the memory the kernel writes between
// passes. iteration: the runner runs the whole iteration once per pass, so each kernel meets the
// caches as the rest of its iteration leaves them, and nothing is saved or restored (run() must be
// repeatable, as the timed runs already require).
enum class CounterReplay : std::uint8_t { kernel, iteration };
std::string_view to_string(CounterReplay replay);
std::optional<CounterReplay> counter_replay_from(std::string_view name);

// The counters phase (runner/experiment.hpp): hardware counters of every kernel launch of one
// iteration, taken by CUPTI's range profiler after the traced iterations and joined to the kernels
// of the last traced one (trace/counters.hpp).
struct CounterCollection {
  // not_taken: the phase did not run (a trace recorded before it existed, a cpu run, no traced
  // iteration); off: the series turned counters off; unavailable: CUPTI refused or failed.
  enum class State : std::uint8_t { not_taken, off, unavailable, collected };
  State state = State::not_taken;
  std::string reason;                // why not, when not_taken or unavailable
  std::vector<std::string> metrics;  // Nsight Compute metric names, in the order of Kernel::counters
  std::int32_t iteration = none;     // the traced iteration whose kernels carry the values
  CounterReplay replay = CounterReplay::kernel;  // what traces from before the choice used
  std::uint32_t passes = 0;          // replay passes the metrics needed (per kernel, or iterations run)
  std::uint32_t ranges = 0;          // kernel launches the profiler measured
  Ns wall = 0;                       // the phase's wall time: set-up, the passes, decoding
};
std::string_view to_string(CounterCollection::State state);
std::optional<CounterCollection::State> counter_state_from(std::string_view name);

struct Trace {
  Strings strings;
  std::vector<Iteration> iterations;
  std::vector<HostRange> ranges;
  std::vector<ApiCall> api_calls;
  std::vector<Kernel> kernels;
  std::vector<Copy> copies;
  std::vector<Memset> memsets;
  std::vector<Synchronization> syncs;
  std::vector<MemoryEvent> memory;  // in the order recorded: by time within each source
  std::vector<DeviceProperties> devices;
  Collection collection;
  CounterCollection counters;
  std::uint32_t process = 0;  // pid of the worker that recorded it
  Ns unix_offset = 0;  // added to the trace's clock, Unix time in ns; 0 when the trace did not record it
  std::optional<Distributed> distributed;

  const DeviceProperties* device(std::uint32_t id) const;
  std::size_t record_count() const;
  Ns earliest() const;  // the first start of any record; 0 for an empty trace
};

// Joins device records to the API calls that launched them (by correlation id), and each API call
// to the innermost host range open on its thread when it was made (host ranges and API calls share
// the clock and the thread ids), and so to an iteration. A call inside no range of its thread (a
// library's own thread, say) belongs to the iteration whose interval contains it. The driver's
// memory events take their API call's iteration.
void link(Trace& trace);

}  // namespace expr::trace
