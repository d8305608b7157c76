// Reading a series for a command: its plan, its guesses compiled; and the plugins found.
#include "session/loaded_series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "series/axes.hpp"
#include "series/series.hpp"
#include "session/status.hpp"

namespace expr::session {

namespace fs = std::filesystem;

std::size_t LoadedSeries::guess_count() const {
  std::size_t count = sweep_guesses.size();
  for (const auto& g : guesses) count += g.size();
  return count;
}

std::vector<expect::CompiledSweepGuess> compile_sweep_guesses(const std::vector<std::pair<std::string, series::GuessSpec>>& specs,
                                                              const std::vector<report::PlannedPoint>& points,
                                                              std::vector<util::Problem>& problems) {
  std::vector<std::string> families;
  for (const auto& p : points)
    if (std::find(families.begin(), families.end(), p.family) == families.end()) families.push_back(p.family);
  std::vector<expect::CompiledSweepGuess> out;
  for (const auto& [family, spec] : specs) {
    std::vector<std::string> axes;
    const auto first = std::find_if(points.begin(), points.end(), [&family = family](const auto& p) { return p.family == family; });
    if (first != points.end())
      for (const auto& [axis, value] : first->point) axes.push_back(axis);
    if (auto g = expect::compile_sweep_guess(spec, family, axes, families, problems)) out.push_back(std::move(*g));
  }
  return out;
}

LoadedSeries load_series(const fs::path& file, const std::vector<std::string>& axes) {
  std::vector<series::AxisOverride> overrides;
  for (const auto& option : axes) overrides.push_back(or_stop(Status::bad_input, [&] { return series::parse_axis_override(option); }));
  try {
    const auto s = series::read(file);
    loader::PluginCatalog catalog(loader::search_path(s.plugin_path, loader::Origin::plugin_path));
    auto plan = series::plan(s, catalog, overrides);
    auto guesses = expect::compile_guesses(plan);
    std::vector<report::PlannedPoint> points;
    for (const auto& e : plan.experiments) points.push_back({e.name, e.family, e.point});
    std::vector<util::Problem> problems;
    auto sweep_guesses = compile_sweep_guesses(plan.sweep_guesses, points, problems);
    if (!problems.empty()) throw util::InputError(std::move(problems));
    return LoadedSeries{std::move(plan), std::move(guesses), std::move(sweep_guesses), std::nullopt};
  } catch (const util::InputError& e) {
    const auto count = e.problems().size();
    throw Stop::problems(e, fmt::format("{} problem{} in {}; nothing ran", count, count == 1 ? "" : "s", file.string()));
  }
}

std::string file_text(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

FoundPlugins find_plugins(const std::vector<fs::path>& extra_dirs) {
  loader::PluginCatalog catalog(loader::search_path(extra_dirs, loader::Origin::option));
  FoundPlugins out{catalog.dirs(), {}};
  for (const auto& [name, places] : catalog.available()) {
    FoundPlugin found{name, places.front(), nullptr, ""};
    try {
      if (places.size() > 1) throw loader::LoadError(loader::PluginCatalog::ambiguity(name, places));
      found.library = catalog.find(name);
    } catch (const loader::LoadError& e) {
      found.problem = e.what();
    }
    out.plugins.push_back(std::move(found));
  }
  return out;
}

}  // namespace expr::session
