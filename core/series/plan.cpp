#include "series/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>

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
      throw std::invalid_argument(fmt::format("parameter '{}' is true or false, not '{}'", spec.name, text));
    case ParamType::integer: {
      std::int64_t v = 0;
      if (whole(v)) return v;
      throw std::invalid_argument(fmt::format("parameter '{}' is a whole number, not '{}'", spec.name, text));
    }
    case ParamType::number: {
      // from_chars reads "nan" and "inf" too; they are no JSON number, and would not survive the
      // trip from the worker.
      double v = 0;
      if (whole(v) && std::isfinite(v)) return v;
      throw std::invalid_argument(fmt::format("parameter '{}' is a finite number, not '{}'", spec.name, text));
    }
    case ParamType::string:
      if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end())
        throw std::invalid_argument(fmt::format("parameter '{}' is one of {}, not '{}'{}", spec.name, util::one_of(spec.choices), text,
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
        problems.push_back({raw.key_pos, fmt::format("plugin {} has no parameter '{}'{} (parameters: {})", d.name, name,
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

}  // namespace

Plan plan(const Series& series, loader::PluginCatalog& plugins) {
  std::vector<util::Problem> problems;
  Plan p{series.file, series.name, series.description, {}};
  for (const auto& x : series.experiments) {
    ExperimentPlan e;
    e.name = x.name.value;
    e.name_pos = x.name.pos;
    e.plugin_pos = x.plugin.pos;
    e.description = x.description;
    e.device = x.device.value;
    e.iterations = x.iterations;
    e.timeout = x.timeout;
    e.memory = x.memory;
    try {
      e.plugin = plugins.find(x.plugin.value);
    } catch (const loader::LoadError& err) {
      problems.push_back({x.plugin.pos, err.what()});
      continue;
    }
    const auto& d = e.plugin->description();
    e.params = bind_params(x, d, problems);
    // Where a plugin can run depends on how it was built (a CPU-only LibTorch, say): the runner
    // skips what cannot run here, with the reason, so the same series validates everywhere.
    e.guesses = x.guesses;
    if (x.plugin_guesses) {
      try {
        for (auto& g : e.plugin->create()->guesses(e.params))
          e.guesses.push_back({std::move(g.check), {e.plugin->file().string(), 0, 0}, false, std::move(g.why), GuessOrigin::plugin});
      } catch (const std::exception& err) {
        problems.push_back({x.plugin.pos, fmt::format("plugin {}: guesses() failed: {}", d.name, err.what())});
      }
    }
    p.experiments.push_back(std::move(e));
  }
  if (!problems.empty()) throw util::InputError(std::move(problems));
  return p;
}

}  // namespace expr::series
