// The one header an expr plugin includes.
//
// A plugin is a shared library that describes itself, prepares its inputs in setup(), does the
// measured work in run() and states what it expects the trace to show in guesses(). The runner
// times and traces every plugin the same way; the plugin never talks to a profiler itself.
//
//   class Copy final : public expr::Plugin {
//     expr::Description describe() const override { ... }
//     void setup(expr::Context& ctx, const expr::Params& p) override { ... }
//     void run(expr::Context& ctx) override { auto r = ctx.range("copy"); ... }
//   };
//   EXPR_PLUGIN(Copy)
//
// Only standard-library types cross the boundary, so a plugin built with the same compiler family
// and this header's ABI version can be loaded by any expr binary of that version.
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
inline constexpr std::uint32_t plugin_abi_version = 1;

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
};

class Context {
 public:
  virtual ~Context() = default;

  virtual Device device() const = 0;
  virtual int device_index() const = 0;

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
  // the experiment: a fast variant that computes the wrong thing is not a result.
  virtual void report_correctness(std::string_view what, double relative_error, double tolerance) = 0;

  // Facts about this experiment (e.g. "backend" -> "flash"), shown with its results and readable
  // from expectations as fact("backend").
  virtual void report_fact(std::string_view key, std::string_view value) = 0;

  // Facts about the software the plugin runs on (e.g. "libtorch" -> "2.11.0"), kept with the
  // environment of the whole run.
  virtual void note_environment(std::string_view key, std::string_view value) = 0;

  virtual void add_trace_hook(std::unique_ptr<TraceHook> hook) = 0;
};

// ---- The plugin itself --------------------------------------------------------------------------

class Plugin {
 public:
  virtual ~Plugin() = default;

  virtual Description describe() const = 0;

  // Called once per experiment, before anything is timed: allocate inputs, check correctness.
  virtual void setup(Context& ctx, const Params& params) = 0;
  // The measured region. Called many times; must leave the device queue with all its work.
  virtual void run(Context& ctx) = 0;
  virtual void teardown(Context&) {}

  // What the plugin expects the trace to show for these parameters.
  virtual std::vector<Guess> guesses(const Params&) const { return {}; }
  virtual std::optional<Work> work(const Params&) const { return std::nullopt; }
};

}  // namespace expr

namespace expr {
// The two functions the loader looks up in a plugin library; EXPR_PLUGIN defines them.
inline constexpr const char* plugin_abi_symbol = "expr_plugin_abi_version";
inline constexpr const char* plugin_create_symbol = "expr_plugin_create";
}  // namespace expr

// Exports a Plugin subclass. Use once per library, at namespace scope.
#define EXPR_PLUGIN(PluginClass)                                                                    \
  extern "C" __attribute__((visibility("default"))) std::uint32_t expr_plugin_abi_version() {       \
    return ::expr::plugin_abi_version;                                                              \
  }                                                                                                 \
  extern "C" __attribute__((visibility("default"))) ::expr::Plugin* expr_plugin_create() {          \
    return new PluginClass();                                                                       \
  }
