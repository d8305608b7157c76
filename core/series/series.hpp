// A series file as written: experiments, their plugins, parameters and guesses, each value with the
// place it was written. Reading checks the file's shape; plan.hpp checks it against the plugins.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "outcome/measurement.hpp"
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

// A guess as written: in the series file (`expect:`) or returned by the plugin's guesses().
// expect/guesses.hpp compiles it; report/ keeps it with its judgement.
enum class GuessOrigin { series, plugin };
std::string_view to_string(GuessOrigin origin);

struct GuessSpec {
  std::string check;
  util::SourcePos pos;  // of the check's first character; for a plugin's guess, the plugin file
  bool required = false;
  std::string why;
  GuessOrigin origin = GuessOrigin::series;
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
  std::vector<GuessSpec> guesses;
  bool plugin_guesses = true;  // also check the guesses the plugin states
};

struct Series {
  std::filesystem::path file;
  std::string name;
  std::string description;
  std::vector<std::filesystem::path> plugin_path;  // made absolute, relative to the file
  std::vector<ExperimentSpec> experiments;
};

// Throws util::InputError with every problem found, each at file:line:column.
Series read(const std::filesystem::path& file);

}  // namespace expr::series
