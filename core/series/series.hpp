// A series file as written: experiments, their plugins, parameters and guesses, each value with the
// place it was written. Reading checks the file's shape; plan.hpp checks it against the plugins.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/source.hpp"

namespace expr::series {

// How much to run. Timed sampling stops once the median is known to within max_noise (after
// min_samples and min_time) or once max_time is spent; runner/sampler.hpp says how.
struct Iterations {
  int warmup = 3;
  int traced = 3;
  int min_samples = 10;
  double min_time = 0.2;   // seconds
  double max_time = 3.0;   // seconds, per timing loop
  double max_noise = 0.005; // standard error of the median, relative to it
};

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

struct ExpectationSpec {
  std::string check;
  util::SourcePos pos;  // of the check's first character
  bool required = false;
  std::string why;
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
  std::vector<ExpectationSpec> expectations;
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
