// The one header an expr plugin includes.
//
// A plugin is a shared library that describes itself, prepares its inputs in setup(), does the
// measured work in run(), checks the first call's result in verify() and states what it expects
// the trace to show in guesses(). The runner times and traces every plugin the same way; the
// plugin never talks to a profiler itself.
//
//   class Copy final : public expr::Plugin {
//     expr::Description describe() const override { ... }
//     void setup(expr::Context& ctx, const expr::Params& p) override { ... }
//     void run(expr::Context& ctx) override { auto r = ctx.range("copy"); ... }
//     void verify(expr::Context& ctx) override { ctx.report_correctness(...); }
//   };
//   EXPR_PLUGIN(Copy)
//
// One worker calls, in order: setup(), run() once as the cold first call (timed, tracing off),
// verify(), run() for warm-up, timing and tracing (and, with hardware counters on, once per counter
// pass: run() must be repeatable), teardown(). The rule that keeps the first call cold: setup must
// not run the measured work. Whatever run() initialises lazily on its first call (a cuBLAS handle
// and workspace, cuDNN's plan for a shape, a kernel module, a thread pool) is part of what the
// first call measures; setup() that runs the work, or a reference computed with the same libraries
// on the same device, would do it untimed and leave a warm call to measure.
// So correctness is checked after the first call, in verify(), on the first call's own output.
// The runner enforces what it can without costing the timed calls anything: report_correctness
// is refused outside verify(), and a trace hook may watch setup (TraceHook::seen_in_setup).
//
// Which process runs what: describe() and guesses() run in expr's parent process (`expr run`,
// `validate` and `list` load the plugin there), before any experiment starts; they must not touch
// the device. setup(), run(), verify(), teardown() and work() run in the experiment's worker, a
// process forked per experiment, so a crash or a CUDA error there is that experiment's result.
//
// Only standard-library types cross the boundary, so a plugin must be built with this header's
// ABI version, a compiler of the same family, the same C++ standard library with the same ABI
// settings, and (for LibTorch plugins) the LibTorch expr was built with: EXPR_PLUGIN records all
// of it (EXPR_PLUGIN_BUILD_TAG below) and the loader refuses a mismatch, naming both sides.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace expr {

// Bumped whenever anything in this header changes layout or meaning.
inline constexpr std::uint32_t plugin_abi_version = 5;

enum class Device { cpu, cuda };

// ---- Parameters ---------------------------------------------------------------------------------

using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

enum class ParamType { boolean, integer, number, string };

struct ParamSpec {
  std::string name;
  ParamType type;
  ParamValue default_value;
  std::string doc;
  std::vector<std::string> choices;  // for strings: the only accepted values; empty means any
};

// Parameter values after validation: every declared parameter is present with its declared type.
class Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, ParamValue> values) : values_(std::move(values)) {}

  template <class T>
  const T& get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw std::out_of_range("no parameter '" + name + "'");
    if (const T* v = std::get_if<T>(&it->second)) return *v;
    throw std::invalid_argument("parameter '" + name + "' has another type");
  }
  std::int64_t integer(const std::string& name) const { return get<std::int64_t>(name); }
  bool boolean(const std::string& name) const { return get<bool>(name); }
  double number(const std::string& name) const { return get<double>(name); }
  const std::string& string(const std::string& name) const { return get<std::string>(name); }

  const std::map<std::string, ParamValue>& values() const { return values_; }

 private:
  std::map<std::string, ParamValue> values_;
};

// ---- What a plugin says about itself ------------------------------------------------------------

struct Description {
  std::string name;     // what a series file writes after `plugin:`
  std::string summary;  // one line
  std::vector<ParamSpec> params;
  std::vector<Device> devices;  // where it can run
};

// A guess about the trace, in the expectation language (docs/expectations.md), e.g.
// {"copies(kind=DtoD) == 0", "in-place masked_fill_ writes into the scores; nothing to clone"}.
struct Guess {
  std::string check;
  std::string why;
};

// Work done by one run(), for throughput figures. Either may be zero when it does not apply.
struct Work {
  double flops = 0;
  double bytes = 0;  // the fewest bytes one run must move through memory
};

// ---- What the runner offers a plugin ------------------------------------------------------------

enum class LogLevel { debug, info, warning, error };

enum class RangeKind : std::uint8_t { plugin, op };

// Returned by begin_range; pass it back to end_range. Negative when nothing is being recorded.
using RangeHandle = std::int64_t;

class Context;

// Something a plugin switches on only while iterations are traced, e.g. a framework op observer.
class TraceHook {
 public:
  virtual ~TraceHook() = default;
  virtual void start(Context& ctx) = 0;
  virtual void stop() = 0;

  // For the check that setup did not run the measured work. A hook added at the start of setup()
  // may watch the rest of it and must stop watching in setup_done(), which the runner calls as
  // setup() returns, before anything is timed. seen_in_setup() then names the outermost records
  // the hook saw there that start() would record (for an op observer: the framework ops setup
  // dispatched outside other ops). When every outermost op of a traced run() is among them, the
  // runner notes that setup ran the measured work and the first call was not cold.
  virtual void setup_done() {}
  virtual std::vector<std::string> seen_in_setup() const { return {}; }

  // What start() records: framework ops as host ranges (the default), or the framework allocator's
  // events (Context::record_allocation). The trace says which it holds, so that a figure nothing
  // recorded reads as not traced rather than as zero.
  enum class Records { ops, allocations };
  virtual Records records() const { return Records::ops; }
};

class Context {
 public:
  virtual ~Context() = default;

  virtual Device device() const = 0;
  virtual int device_index() const = 0;

  // A directory every worker of this run reads and writes, for what one experiment computes and
  // others with the same inputs can read instead of computing it again (the attention plugins keep
  // their float64 reference there). Write a file under a name of your own and rename it into
  // place, so that a reader never meets half of it. Removed when the run ends; empty when the run
  // has none.
  virtual std::string shared_directory() const = 0;

  virtual void log(LogLevel level, std::string_view message) = 0;
  void info(std::string_view message) { log(LogLevel::info, message); }
  void warn(std::string_view message) { log(LogLevel::warning, message); }

  // Named host ranges, recorded during traced iterations and free otherwise. Ranges nest per
  // thread; device work launched inside a range is attributed to it.
  virtual bool tracing() const = 0;
  virtual RangeHandle begin_range(std::string_view name, RangeKind kind) = 0;
  virtual void end_range(RangeHandle handle) = 0;

  class Range {
   public:
    Range(Context& ctx, std::string_view name) : ctx_(ctx), handle_(ctx.begin_range(name, RangeKind::plugin)) {}
    ~Range() { ctx_.end_range(handle_); }
    Range(const Range&) = delete;
    Range& operator=(const Range&) = delete;

   private:
    Context& ctx_;
    RangeHandle handle_;
  };
  [[nodiscard]] Range range(std::string_view name) { return Range(*this, name); }

  // How far the result is from a trusted reference. An error above the tolerance (or NaN) fails
  // the experiment: a fast variant that computes the wrong thing is not a result. Accepted only
  // from verify(); a call from setup(), run() or teardown() fails the experiment with an error
  // naming the plugin and the hook it came from.
  virtual void report_correctness(std::string_view what, double relative_error, double tolerance) = 0;

  // Facts about this experiment (e.g. "backend" -> "flash"), shown with its results and readable
  // from guesses as fact("backend").
  virtual void report_fact(std::string_view key, std::string_view value) = 0;

  // Facts about the software the plugin runs on (e.g. "libtorch" -> "2.11.0"), kept with the
  // environment of the whole run.
  virtual void note_environment(std::string_view key, std::string_view value) = 0;

  virtual void add_trace_hook(std::unique_ptr<TraceHook> hook) = 0;

  // One allocation (bytes > 0) or release (bytes < 0) by the framework's allocator, for the memory
  // figures (peak_memory, allocated_bytes, allocations) and the trace's memory events. Kept only
  // while an iteration is traced; call it from a TraceHook started around them (expr_torch's
  // trace_memory reports LibTorch's allocators so). total_allocated and total_reserved: what the
  // allocator holds for tensors and has reserved from the driver after it, -1 where it does not
  // say; device: the CUDA device, -1 for host memory.
  virtual void record_allocation(std::uint64_t address, std::int64_t bytes, std::int64_t total_allocated, std::int64_t total_reserved,
                                 int device) = 0;
};

// ---- The plugin itself --------------------------------------------------------------------------

class Plugin {
 public:
  virtual ~Plugin() = default;

  virtual Description describe() const = 0;

  // Called once per experiment, before anything is timed: prepare the inputs and nothing more.
  // Setup must not run the measured work (see the top of this file).
  virtual void setup(Context& ctx, const Params& params) = 0;
  // The measured region. Called many times; must leave the device queue with all its work.
  virtual void run(Context& ctx) = 0;
  // Called once, right after the cold first call (the device has finished it) and before the
  // warm-up: compare what that call produced with a reference and report it with
  // report_correctness, the only place it is accepted. Computing the reference here, on the
  // experiment's device, warms nothing the first call should have found cold: it already ran. A
  // plugin that does not override verify() has no correctness figure (rel_error is not evaluable).
  virtual void verify(Context&) {}
  virtual void teardown(Context&) {}

  // What the plugin expects the trace to show for these parameters.
  virtual std::vector<Guess> guesses(const Params&) const { return {}; }
  virtual std::optional<Work> work(const Params&) const { return std::nullopt; }
};

}  // namespace expr

// ---- What a plugin shares with the expr that loads it ---------------------------------------------
//
// std::string, std::vector and std::variant cross the boundary, and their layout is fixed by the
// compiler family's C++ ABI (GCC and Clang share the Itanium ABI on Linux, so either may build a
// plugin for the other), the standard library (libstdc++ or libc++) and, for libstdc++,
// _GLIBCXX_USE_CXX11_ABI (std::string's layout). A LibTorch plugin also brings LibTorch into the
// process, which holds one: it must be the LibTorch expr was built with. The expr::torch CMake
// target defines EXPR_PLUGIN_LIBTORCH as that version. EXPR_PLUGIN_BUILD_TAG is all of it as
// "key=value;..." text, made by the preprocessor where the plugin is compiled.
#if defined(__GNUC__)  // GCC, and Clang, which defines it too
#define EXPR_PLUGIN_COMPILER_FAMILY "gcc-compatible"
#elif defined(_MSC_VER)
#define EXPR_PLUGIN_COMPILER_FAMILY "msvc"
#else
#define EXPR_PLUGIN_COMPILER_FAMILY "unknown"
#endif
#if defined(_LIBCPP_VERSION)
#define EXPR_PLUGIN_STDLIB "stdlib=libc++"
#elif defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI
#define EXPR_PLUGIN_STDLIB "stdlib=libstdc++;cxx11_abi=1"
#elif defined(__GLIBCXX__)
#define EXPR_PLUGIN_STDLIB "stdlib=libstdc++;cxx11_abi=0"
#else
#define EXPR_PLUGIN_STDLIB "stdlib=unknown"
#endif
#if defined(EXPR_PLUGIN_LIBTORCH)
#define EXPR_PLUGIN_LIBTORCH_TAG ";libtorch=" EXPR_PLUGIN_LIBTORCH
#else
#define EXPR_PLUGIN_LIBTORCH_TAG ""
#endif
#define EXPR_PLUGIN_BUILD_TAG                                                                        \
  "compiler=" EXPR_PLUGIN_COMPILER_FAMILY ";" EXPR_PLUGIN_STDLIB EXPR_PLUGIN_LIBTORCH_TAG

namespace expr {
// The functions the loader looks up in a plugin library; EXPR_PLUGIN defines them. The ABI version
// is read first: a plugin of another version may not have the others.
inline constexpr const char* plugin_abi_symbol = "expr_plugin_abi_version";
inline constexpr const char* plugin_build_tag_symbol = "expr_plugin_build_tag";
inline constexpr const char* plugin_create_symbol = "expr_plugin_create";
}  // namespace expr

// Exports a Plugin subclass. Use once per library, at namespace scope.
#define EXPR_PLUGIN(PluginClass)                                                                    \
  extern "C" __attribute__((visibility("default"))) std::uint32_t expr_plugin_abi_version() {       \
    return ::expr::plugin_abi_version;                                                              \
  }                                                                                                 \
  extern "C" __attribute__((visibility("default"))) const char* expr_plugin_build_tag() {           \
    return EXPR_PLUGIN_BUILD_TAG;                                                                   \
  }                                                                                                 \
  extern "C" __attribute__((visibility("default"))) ::expr::Plugin* expr_plugin_create() {          \
    return new PluginClass();                                                                       \
  }
