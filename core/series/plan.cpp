// Checking a series against its plugins (plan.hpp): every experiment expanded into its points, each
// point typed, with its guesses.
#include "series/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "series/sweep.hpp"
#include "util/paths.hpp"
#include "util/text.hpp"

namespace expr::series {

std::string to_string(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) return x;
        else return fmt::format("{}", x);
      },
      v);
}

ParamValue typed_param(const ParamSpec& spec, const std::string& text) {
  auto whole = [&](auto& out) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && ptr == text.data() + text.size();
  };
  switch (spec.type) {
    case ParamType::boolean:
      if (text == "true") return true;
      if (text == "false") return false;
      throw std::invalid_argument(fmt::format("parameter '{}' is true or false, not '{}'", spec.name, util::shortened(text)));
    case ParamType::integer: {
      std::int64_t v = 0;
      if (whole(v)) return v;
      throw std::invalid_argument(fmt::format("parameter '{}' is a whole number, not '{}'", spec.name, util::shortened(text)));
    }
    case ParamType::number: {
      // from_chars reads "nan" and "inf" too; they are no JSON number, and would not survive the
      // trip from the worker.
      double v = 0;
      if (whole(v) && std::isfinite(v)) return v;
      throw std::invalid_argument(fmt::format("parameter '{}' is a finite number, not '{}'", spec.name, util::shortened(text)));
    }
    case ParamType::string:
      if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end())
        throw std::invalid_argument(fmt::format("parameter '{}' is one of {}, not '{}'{}", spec.name, util::one_of(spec.choices), util::shortened(text),
                                                util::did_you_mean(text, spec.choices)));
      return text;
  }
  throw std::logic_error("unknown parameter type");
}

namespace {

Params bind_params(const ExperimentSpec& x, const Description& d, std::vector<util::Problem>& problems) {
  std::map<std::string, ParamValue> values;
  for (const auto& spec : d.params) values[spec.name] = spec.default_value;
  std::vector<std::string> names;
  for (const auto& spec : d.params) names.push_back(spec.name);
  for (const auto& [name, raw] : x.params) {
    const auto spec = std::find_if(d.params.begin(), d.params.end(), [&wanted = name](auto& s) { return s.name == wanted; });
    if (spec == d.params.end()) {
      if (!raw.from_defaults)
        problems.push_back({raw.key_pos, fmt::format("plugin {} has no parameter '{}'{} (parameters: {})", d.name, util::shortened(name),
                                                     util::did_you_mean(name, names), fmt::join(names, ", "))});
      continue;
    }
    if (!raw.scalar) {
      problems.push_back({raw.pos, fmt::format("parameter '{}' must be a single value", name)});
      continue;
    }
    try {
      values[name] = typed_param(*spec, raw.text);
    } catch (const std::invalid_argument& e) {
      problems.push_back({raw.pos, e.what()});
    }
  }
  return Params(std::move(values));
}

// An experiment of the series, its plugin opened and its sweep expanded.
struct Family {
  const ExperimentSpec* spec;
  std::shared_ptr<const loader::PluginLibrary> plugin;
  std::vector<AxisPoint> points;
};

// Every experiment's plugin and points; a plugin that cannot be opened is a problem at `plugin:`.
std::vector<Family> families(const Series& series, loader::PluginCatalog& plugins, const std::vector<AxisOverride>& overrides,
                             std::vector<util::Problem>& problems) {
  std::vector<Family> out;
  for (const auto& x : series.experiments) {
    try {
      auto plugin = plugins.find(x.plugin.value);
      auto points = expand(x, plugin->description(), overrides, series.max_points.value, problems);
      out.push_back({&x, std::move(plugin), std::move(points)});
    } catch (const loader::LoadError& err) {
      problems.push_back({x.plugin.pos, err.what()});
    }
  }
  return out;
}

// A parameter or axis of `defaults:` applies to the experiments whose plugin declares it; one that
// no plugin of the series declares is a typo (known only when every plugin could be opened).
void check_defaults_apply(const Series& series, const std::vector<Family>& families, std::vector<util::Problem>& problems) {
  std::vector<std::string> declared;
  for (const auto& f : families)
    for (const auto& spec : f.plugin->description().params)
      if (std::find(declared.begin(), declared.end(), spec.name) == declared.end()) declared.push_back(spec.name);
  std::set<std::string> reported;
  const auto check = [&](const std::string& name, const util::SourcePos& pos, std::string_view what) {
    if (std::find(declared.begin(), declared.end(), name) != declared.end() || !reported.insert(name).second) return;
    problems.push_back({pos, fmt::format("no plugin of the series has a parameter '{}', so this {} of the defaults applies to nothing{} "
                                         "(parameters: {})",
                                         util::shortened(name), what, util::did_you_mean(name, declared), fmt::join(declared, ", "))});
  };
  for (const auto& x : series.experiments) {
    for (const auto& [name, raw] : x.params)
      if (raw.from_defaults) check(name, raw.key_pos, "parameter");
    for (const auto& a : x.axes)
      if (a.from_defaults) check(a.name.value, a.name.pos, "axis");
  }
}

// An --axis option that no experiment's plugin declares would change nothing.
void check_overrides_apply(const std::vector<Family>& families, const std::vector<AxisOverride>& overrides, std::vector<util::Problem>& problems) {
  for (const auto& o : overrides) {
    const bool declared = std::any_of(families.begin(), families.end(), [&](const Family& f) {
      const auto& params = f.plugin->description().params;
      return std::any_of(params.begin(), params.end(), [&](const ParamSpec& spec) { return spec.name == o.name; });
    });
    if (!declared) problems.push_back({{o.option, 0, 0}, fmt::format("no experiment's plugin has a parameter '{}'", o.name)});
  }
}

void check_max_points(const Series& series, const std::vector<Family>& families, std::vector<util::Problem>& problems) {
  std::size_t total = 0;
  for (const auto& f : families) total += f.points.size();
  if (total > series.max_points.value)
    problems.push_back({series.max_points.pos.line > 0 ? series.max_points.pos : util::SourcePos{series.file.string(), 1, 1},
                        fmt::format("the series expands to {} points, more than max_points ({}); nothing ran. Narrow the axes, or "
                                    "raise the limit with 'max_points: {}' at the top of the series file",
                                    total, series.max_points.value, total)});
}

// The series' own guesses, then the plugin's for these parameters. A plugin's guess is in no file:
// its problems are reported at the experiment's plugin, quoting the guess.
std::vector<GuessSpec> guesses(const Family& f, const Params& params, std::vector<util::Problem>& problems) {
  auto out = f.spec->guesses;
  if (!f.spec->plugin_guesses) return out;
  try {
    for (auto& g : f.plugin->create()->guesses(params)) {
      auto written = util::TextOrigin::detached(f.spec->plugin.pos, g.check);
      out.push_back({std::move(g.check), std::move(written), false, std::move(g.why), GuessOrigin::plugin});
    }
  } catch (const std::exception& err) {
    problems.push_back({f.spec->plugin.pos, fmt::format("plugin {}: guesses() failed: {}", f.plugin->description().name, err.what())});
  }
  return out;
}

// One point of a family as the experiment the runner runs; `base` holds the parameters its axes leave.
ExperimentPlan experiment_plan(const Family& f, const AxisPoint& point, const Params& base, std::vector<util::Problem>& problems) {
  const auto& x = *f.spec;
  ExperimentPlan e;
  e.family = x.name.value;
  e.name = identity(e.family, point);
  e.point = point;
  e.name_pos = x.name.pos;
  e.plugin_pos = x.plugin.pos;
  e.description = x.description;
  // Where a plugin can run depends on how it was built (a CPU-only LibTorch, say): the runner
  // skips what cannot run here, with the reason, so the same series validates everywhere.
  e.device = x.device.value;
  e.iterations = x.iterations;
  e.timeout = x.timeout;
  e.memory = x.memory;
  e.counters = x.counters;
  e.plugin = f.plugin;
  // The identity names the experiment's folder in the run directory.
  if (const auto why = util::file_name_problem(e.name))
    problems.push_back({x.name.pos, fmt::format("the point '{}' cannot name a folder: {}", util::shortened(e.name), *why)});
  auto values = base.values();
  for (const auto& [name, value] : point) values[name] = value;
  e.params = Params(std::move(values));
  e.guesses = guesses(f, e.params, problems);
  return e;
}

}  // namespace

Plan plan(const Series& series, loader::PluginCatalog& plugins, const std::vector<AxisOverride>& overrides) {
  std::vector<util::Problem> problems;
  // Every experiment's points first, so a sweep too large is refused before any plugin is asked
  // for its guesses.
  const auto expanded = families(series, plugins, overrides, problems);
  if (expanded.size() == series.experiments.size()) check_defaults_apply(series, expanded, problems);
  check_overrides_apply(expanded, overrides, problems);
  check_max_points(series, expanded, problems);
  if (!problems.empty()) throw util::InputError(std::move(problems));

  Plan p{series.file, series.name, series.description, {}, {}, series.gates};
  for (const auto& f : expanded) {
    const auto base = bind_params(*f.spec, f.plugin->description(), problems);
    for (const auto& g : f.spec->sweep_guesses) p.sweep_guesses.emplace_back(f.spec->name.value, g);
    for (const auto& point : f.points) p.experiments.push_back(experiment_plan(f, point, base, problems));
  }
  if (!problems.empty()) throw util::InputError(std::move(problems));
  return p;
}

}  // namespace expr::series
