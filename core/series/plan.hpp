// A series checked against its plugins: typed parameters, the guesses to check (the series' own
// and the plugin's, as written: expect/guesses.hpp compiles them), and everything the runner
// needs. Nothing runs before this and the compilation of its guesses succeed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loader/plugin_library.hpp"
#include "series/axes.hpp"
#include "series/series.hpp"

namespace expr::series {

struct ExperimentPlan {
  std::string name;    // the point's identity: family[axis=value,...] (series/axes.hpp)
  std::string family;  // the experiment's name in the series file
  AxisPoint point;     // its axis values, in axis order; empty when it has no axes
  util::SourcePos name_pos, plugin_pos;  // where the series names the experiment and its plugin
  std::string description;
  std::shared_ptr<const loader::PluginLibrary> plugin;
  Params params;
  DeviceChoice device = DeviceChoice::auto_;
  Iterations iterations;
  double timeout = 0;
  std::optional<std::uint64_t> memory;  // bytes; see ExperimentSpec
  CounterChoice counters;
  std::vector<GuessSpec> guesses;  // the series' own first, then the plugin's
  bool trace_cold_call = false;    // a guess reads cold.*: trace the cold call in a second worker (expect/guesses.hpp sets it)
};

struct Plan {
  std::filesystem::path file;
  std::string name;
  std::string description;
  std::vector<ExperimentPlan> experiments;
  std::vector<std::pair<std::string, GuessSpec>> sweep_guesses{};  // each with its family (expect/sweep.hpp)
  Gates gates;
};

// Throws util::InputError listing every problem: unknown plugins or parameters, values of the wrong
// type, a plugin whose guesses() fails, a sweep with no points or more than max_points, each at
// file:line:column (or at the --axis option that caused it).
Plan plan(const Series& series, loader::PluginCatalog& plugins, const std::vector<AxisOverride>& overrides = {});

// A parameter's text as the plugin's declared type; throws std::invalid_argument with the reason.
ParamValue typed_param(const ParamSpec& spec, const std::string& text);
std::string to_string(const ParamValue& v);

}  // namespace expr::series
