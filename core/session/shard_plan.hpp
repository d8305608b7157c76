// The series a run asks for (report::RunRequest), and with --shard K/N the part of it this shard
// runs: points balanced across shards by the wall times the history knows of them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "history/store.hpp"
#include "report/run_directory.hpp"
#include "series/shard.hpp"
#include "session/loaded_series.hpp"

namespace expr::session {

// Each point's expected cost: its wall time in the history; a point without one, the median of
// those known; all the same (1) when none is known. `run` is the history run they come from,
// empty when none.
struct ExpectedCosts {
  std::vector<double> seconds;  // parallel to the identities asked about
  std::string run;
};
ExpectedCosts expected_costs(const history::WallTimes& known, const std::vector<std::string>& identities);
// The costs of the plan's points from the wall times in `store` (`from` says which runs count);
// equal costs without a store.
ExpectedCosts expected_costs(history::Store* store, const series::Plan& plan, history::WallTimes::From from);

// The shard each point of `plan` runs in as `resumed` (the shard's recorded plan) assigned it: the
// shards of a series must agree on who runs what, so a resumed shard keeps its assignment whatever
// the history has learnt since. Stops with bad_input when the plan has a point the record lacks.
std::vector<std::size_t> recorded_assignment(const report::ShardRecord& resumed, const series::Plan& plan);

// Keeps of `loaded` the points `assignment` gives to `shard` (with their guesses), and records in
// loaded.shard the whole plan with each point's shard, the fingerprint and where the costs came from.
void keep_shard(LoadedSeries& loaded, const series::Shard& shard, const std::vector<std::size_t>& assignment, std::string fingerprint,
                std::string costs_from);

// The series of `request`, read from `file` (the path as the user gave it, for messages), with
// request.rounds over each point's rounds. With request.shard only that shard's points are kept:
// balanced by the wall times of the newest whole run of the series in `store` (none: equal
// costs), or, resuming a shard, as `resumed` recorded it. Stops with bad_input on a wrong series
// or option.
LoadedSeries load_request(const std::filesystem::path& file, const report::RunRequest& request, history::Store* store,
                          const report::ShardRecord* resumed);

}  // namespace expr::session
