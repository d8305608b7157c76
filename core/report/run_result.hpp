// Everything a run produced, as the outputs see it: the run's identity and environment, and per
// experiment its measurement and every guess with its judgement. It grows as experiments finish;
// the sinks (sink.hpp) are shown it after each one.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expect/check.hpp"
#include "expect/sweep.hpp"
#include "outcome/measurement.hpp"
#include "report/like_with_like.hpp"
#include "series/axes.hpp"
#include "series/series.hpp"

namespace expr::report {

struct JudgedGuess {
  series::GuessSpec spec;
  std::optional<expect::Judgement> judgement;  // empty until every experiment it reads has finished
};

struct ExperimentResult {
  outcome::Measurement measurement;
  std::vector<JudgedGuess> guesses;
  std::string family;        // the experiment's name in the series; measurement.experiment is the point's identity
  series::AxisPoint point;   // its axis values, in axis order; empty when it has no axes
};

// A guess about a whole sweep (expect/sweep.hpp) judged for one group of its other axes: a sweep
// guess has one of these per group.
struct JudgedSweepGuess {
  std::string family;
  std::string group;  // "dtype=bf16"; empty when the sweep has one axis
  JudgedGuess guess;
  // Known when judged in this process (not read back from results.json): what to draw it on.
  std::string axis{};           // the axis swept
  std::string metric_text{};    // the metric as written: "gpu_time"
  analysis::MetricCall metric{};  // and bound
  std::string other{};          // crossover: the family compared with
  expect::SweepGeometry geometry{};
};

// A shard's part of a series (series/shard.hpp): which shard it is, the series' fingerprint, and the
// whole series as planned with each experiment's shard, so that `expr merge` can tell what is missing.
struct ShardRecord {
  std::size_t index = 0, count = 1;
  std::string series_fingerprint;
  std::string costs_from;  // the history run whose wall times balanced the shards; empty: equal costs
  struct Point {
    PlannedPoint planned;
    std::size_t shard = 0;
  };
  std::vector<Point> plan;
  std::string str() const;  // "1/3"
};

// One shard of a merged run (`expr merge`): where it was read from (empty when its directory was
// not given) and how many of its planned experiments have no result there.
struct MergedShard {
  std::string shard;  // "1/3"
  std::string dir;
  std::size_t missing = 0;
};

struct RunResult {
  std::string id;  // unique to this run: its start time and a random suffix
  std::string series;
  std::string series_file;
  std::string description;
  std::filesystem::path run_dir;
  std::string revision;           // the expr source revision that made the run
  std::string started, finished;  // ISO 8601, UTC; finished is empty while the run goes on
  std::vector<std::string> resumed;  // when `expr run --resume` took the run up again, ISO 8601, UTC
  std::string interrupted;        // the signal that stopped the run early ("SIGINT"); empty when none did
  std::map<std::string, std::string> environment;
  std::size_t planned = 0;  // experiments in the plan: the run is complete once each has finished
  std::vector<ExperimentResult> experiments;
  std::vector<JudgedSweepGuess> sweep_guesses;  // judged once the run ends
  std::optional<ShardRecord> shard;             // set when the run is one shard of a series
  std::vector<MergedShard> merged;              // set when `expr merge` made the run from shards

  const ExperimentResult* find(const std::string& experiment) const;
};

// Counts over all guesses of a run.
struct Tally {
  std::size_t confirmed = 0, contradicted = 0, not_evaluable = 0, pending = 0;
  std::size_t required_failed = 0;     // required and not confirmed
  std::size_t experiments_failed = 0;  // failed, crashed or timed out
  std::size_t experiments_interrupted = 0;
};
Tally tally(const RunResult& run);

// Host facts for the environment block: hostname, kernel, CPU, cores, expr version and revision.
std::map<std::string, std::string> host_environment();
std::string utc_now();
std::string new_run_id();     // "20261130T081502Z-4f1c2a"
const char* expr_revision();  // `git describe` of the source tree the binary was built from
const char* expr_version();   // the project's version (CMake's PROJECT_VERSION), as the package names it

}  // namespace expr::report
