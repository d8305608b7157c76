// A series file as written: experiments, their plugins, parameters and guesses, each value with the
// place it was written. Reading checks the file's shape; plan.hpp checks it against the plugins.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "outcome/measurement.hpp"
#include "trace/trace.hpp"
#include "util/source.hpp"

namespace expr::series {

using outcome::Iterations;

enum class DeviceChoice { auto_, cpu, cuda };
std::string_view to_string(DeviceChoice d);

template <class T>
struct Located {
  T value{};
  util::SourcePos pos;
};

// A parameter as written; its type is known only once the plugin says what it expects.
struct RawParam {
  std::string text;
  bool scalar = true;
  util::SourcePos pos;      // of the value
  util::SourcePos key_pos;  // of the name
  bool from_defaults = false;  // series-wide: applies only to plugins that declare it
};

// A guess as written: in the series file (`expect:`) or returned by the plugin's guesses(). Its
// life has one name per step: written (GuessSpec), compiled (expect::CompiledGuess, its text
// parsed into an expect::GuessTree and bound), judged (report::JudgedGuess, with its
// expect::Judgement); a sweep guess is compiled into an expect::CompiledSweepGuess and judged per
// group into report::JudgedSweepGuess.
enum class GuessOrigin { series, plugin };
std::string_view to_string(GuessOrigin origin);

struct GuessSpec {
  std::string check;
  // Where each byte of `check` was written, to report a problem inside it (util/source.hpp). A
  // guess in no file at hand (a plugin's, or one read back from a run) is detached: its problems
  // are reported at the experiment's `plugin:` line or where it was recorded, quoting the guess.
  util::TextOrigin written;
  bool required = false;
  std::string why;
  GuessOrigin origin = GuessOrigin::series;

  util::SourcePos pos() const { return written.at(0, 0); }  // where it starts
};

// A sweep axis as written: a plugin parameter and its values, `range(...)` and `pow2(...)` already
// spelled out (series/axes.hpp); typed once the plugin says what it expects.
struct AxisSpec {
  Located<std::string> name;
  std::vector<Located<std::string>> values;
  bool from_defaults = false;  // series-wide: applies only to plugins that declare it
};

// `exclude:` entry: a point is left out when every axis named here matches (a value, a list of
// values, or a comparison such as ">4096").
struct Exclusion {
  std::vector<std::pair<Located<std::string>, std::vector<Located<std::string>>>> conditions;
};

// `counters:` and `counters_replay:`: the hardware-counter phase (runner/experiment.hpp). Off
// unless asked for: it takes several passes over one iteration's kernels.
struct CounterChoice {
  bool on = false;
  std::vector<std::string> metrics;  // Nsight Compute names; `on` means trace::counter_metrics
  trace::CounterReplay replay = trace::CounterReplay::iteration;  // `counters_replay:`
};

struct ExperimentSpec {
  Located<std::string> name;
  Located<std::string> plugin;
  std::string description;
  std::vector<std::pair<std::string, RawParam>> params;  // defaults first, then the experiment's own
  Located<DeviceChoice> device;
  Iterations iterations;
  double timeout = 0;  // seconds
  std::optional<std::uint64_t> memory;  // bytes of host memory the worker may use (runner/limits.hpp); none: no limit
  CounterChoice counters;
  std::vector<GuessSpec> guesses;
  bool plugin_guesses = true;  // also check the guesses the plugin states
  std::vector<AxisSpec> axes;                              // defaults first, then the experiment's own
  std::vector<std::vector<Located<std::string>>> zip;      // axes that move together
  std::vector<Exclusion> exclude;
  std::vector<GuessSpec> sweep_guesses;  // `sweep_expect:`, about the whole sweep (expect/sweep.hpp)
};

// `gates:`: how far each timing may move against a baseline before `expr compare` and `expr run
// --baseline` call it a regression (a fraction of the baseline's median), and whether a change in
// the trace's structure fails the gate too (history/compare.hpp).
struct Gates {
  std::map<std::string, double> thresholds{{"gpu_time", 0.03}, {"host_time", 0.10}};
  bool structure = true;
};
// The metrics a gate can hold: the timings with raw samples to test.
inline const std::vector<std::string> gated_metrics{"gpu_time", "host_time"};

struct Series {
  std::filesystem::path file;
  std::string name;
  std::string description;
  std::vector<std::filesystem::path> plugin_path;  // made absolute, relative to the file
  std::vector<ExperimentSpec> experiments;
  Located<std::size_t> max_points{10'000, {}};  // a sweep expanding to more is refused unless raised
  Gates gates;
};

// Throws util::InputError with every problem found, each at file:line:column.
Series read(const std::filesystem::path& file);

}  // namespace expr::series
