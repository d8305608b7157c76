// A series read, checked against its plugins and with every guess compiled: what `run`, `validate`
// and `slurm` need before anything runs; and the plugins `list` shows.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "expect/guesses.hpp"
#include "expect/sweep.hpp"
#include "loader/plugin_library.hpp"
#include "report/run_result.hpp"
#include "series/plan.hpp"

namespace expr::session {

struct LoadedSeries {
  series::Plan plan;
  std::vector<std::vector<expect::CompiledGuess>> guesses;  // parallel to plan.experiments
  std::vector<expect::CompiledSweepGuess> sweep_guesses;
  // Set when `plan` is one shard of the series (series/shard.hpp): the whole series as planned,
  // each point with its shard.
  std::optional<report::ShardRecord> shard;

  std::size_t guess_count() const;  // about points and about whole sweeps
};
// `axes` are --axis options. Stops with bad_input, saying every problem, when the series or an
// option is wrong.
LoadedSeries load_series(const std::filesystem::path& file, const std::vector<std::string>& axes = {});

// Each family's sweep guesses, checked against the axes of its points; adds what is wrong to `problems`.
std::vector<expect::CompiledSweepGuess> compile_sweep_guesses(const std::vector<std::pair<std::string, series::GuessSpec>>& specs,
                                                              const std::vector<report::PlannedPoint>& points,
                                                              std::vector<util::Problem>& problems);

// The text of a file, as a series' fingerprint and a run's copy of its series read it; empty when
// it cannot be read.
std::string file_text(const std::filesystem::path& file);

// A plugin `expr list` found: its file and description, or why it cannot be used.
struct FoundPlugin {
  std::string name;
  loader::Found place;                                     // the first where it was found
  std::shared_ptr<const loader::PluginLibrary> library;  // null when it could not be used
  std::string problem;                                     // then why
};
struct FoundPlugins {
  std::vector<loader::SearchDir> searched;
  std::vector<FoundPlugin> plugins;  // by name
};
// The plugins in the search path, with `extra_dirs` (--plugin-path) first.
FoundPlugins find_plugins(const std::vector<std::filesystem::path>& extra_dirs);

}  // namespace expr::session
