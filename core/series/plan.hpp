// A series checked against its plugins: typed parameters, compiled expectations (the series' own
// and the plugin's guesses), and everything the runner needs. Nothing runs before this succeeds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "expect/check.hpp"
#include "loader/plugin_library.hpp"
#include "series/series.hpp"

namespace expr::series {

struct Expectation {
  expect::Check check;
  std::string source;  // "series" or "plugin"
  bool required = false;
  std::string why;
  util::SourcePos pos;
};

struct ExperimentPlan {
  std::string name;
  std::string description;
  std::shared_ptr<const loader::PluginLibrary> plugin;
  Params params;
  DeviceChoice device = DeviceChoice::auto_;
  Iterations iterations;
  double timeout = 0;
  std::optional<std::uint64_t> memory;  // bytes; see ExperimentSpec
  std::vector<Expectation> expectations;
};

struct Plan {
  std::filesystem::path file;
  std::string name;
  std::string description;
  std::vector<ExperimentPlan> experiments;
};

// Throws util::InputError listing every problem: unknown plugins, parameters or metrics, values of
// the wrong type, expectations that do not parse, each at file:line:column.
Plan plan(const Series& series, loader::PluginCatalog& plugins);

// A parameter's text as the plugin's declared type; throws std::invalid_argument with the reason.
ParamValue typed_param(const ParamSpec& spec, const std::string& text);
std::string to_string(const ParamValue& v);

}  // namespace expr::series
