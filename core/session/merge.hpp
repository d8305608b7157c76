// `expr merge`: one run directory from the run directories of a series' shards (`expr run --shard
// K/N`). The recorded experiments are judged again together through the path `expr replay` takes
// (session/replay.hpp), so the guesses that span shards get their verdicts; the missing experiments
// are named with their shard; shards of different series or environments are refused unless
// --allow-mixed.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "report/run_result.hpp"
#include "session/options.hpp"
#include "session/replay.hpp"

namespace expr::session {

struct Shard {
  std::filesystem::path dir;
  report::RunResult run;  // with its shard record
};

// Each difference between the shards, one line each: the series, the shard count, the costs that
// balanced them, and every environment fact that is not the same in all but those that may differ
// between a cluster's nodes (host, GPU UUID and index). Fills `environment` with the merged facts, a
// differing one as "A (shards 0/3, 1/3) | B (shard 2/3)". A fact a shard lacks is no difference.
std::vector<std::string> mix(const std::vector<Shard>& shards, std::map<std::string, std::string>& environment);

// What the shards hold together: every planned point of the series, and the experiments recorded
// (one each: a result kept over none, the first directory's kept when two have one).
struct Coverage {
  report::RunResult recorded;                // the experiments, and the sweep guesses each shard recorded
  std::vector<report::PlannedPoint> planned;  // the whole series, as every shard records it
  std::vector<report::MergedShard> merged;    // each shard of the series: its directory, if given, and how many it misses
  std::vector<std::string> missing;           // "NAME (shard K/N, why)" for each planned point without a result
  std::vector<std::string> twice;             // the experiments with a result in more than one shard
};
// Takes the shards' experiments.
Coverage cover(std::vector<Shard>& shards);

struct Merged {
  Judged judged;
  std::size_t shards = 0;
  std::vector<std::string> missing;  // as Coverage has them
};
// Stops with bad_input when a directory is no shard, a shard is given twice, the shards differ
// (without allow_mixed), or the guesses cannot be compiled; with cannot_write when --out cannot be
// written. Its status is `incomplete` when experiments are missing.
Merged merge(const MergeArgs& args);

}  // namespace expr::session
