// The history database: every run recorded, keyed by series, experiment identity, machine and
// time, in one SQLite file. The schema is versioned (PRAGMA user_version) and a file made by an
// earlier expr is migrated forward, one step per version, when it is opened; a file made by a later
// expr is refused rather than guessed at.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/calibration.hpp"
#include "history/database.hpp"
#include "history/record.hpp"

namespace expr::history {

// Each point's run-to-run noise from a calibration: (experiment identity, metric) -> the standard
// deviation of log(median) between processes, and its degrees of freedom.
struct CalibratedNoise {
  double run_to_run = 0, df = 0;
};
using Noise = std::map<std::pair<std::string, std::string>, CalibratedNoise>;

// Points' wall times (seconds from their worker's spawn to its reaping) recorded in the history,
// by identity, and the run they come from (with newest_each, the newest run among them).
struct WallTimes {
  enum class From {
    // The newest finished run of the series that holds every point asked for: shards and runs
    // filtered to some points hold only part, so shards of a series running at the same time,
    // each recording its part, do not change what the others read.
    one_whole_run,
    newest_each,  // each point's newest, from any finished run of the series
  };
  std::string run;
  std::map<std::string, double> seconds;
};

class Store {
 public:
  // The schema this expr reads and writes.
  static const int schema_version;

  // Opens the file (creating it) and migrates it to schema_version. Throws std::runtime_error
  // naming the file: not a database, a schema newer than this expr's, a migration that failed (the
  // file is then left as it was).
  explicit Store(const std::filesystem::path& file);

  const std::filesystem::path& file() const { return db_.file(); }
  int found_version() const { return found_version_; }  // before opening; 0 for a new file

  // Recording a run as it goes: its row first, each experiment as it finishes (replacing an earlier
  // record of the same identity), and at the end its finish time, tally and verdicts.
  void begin_run(const RunRecord& run);
  void record_experiment(const std::string& run_id, const ExperimentRecord& experiment);
  void finish_run(const RunRecord& run);

  struct RunSummary {
    std::string id, series, started, finished, revision, run_dir, machine;
    std::size_t planned = 0, recorded = 0;  // experiments planned, and recorded
    report::Tally tally;
    std::string gate, baseline;  // with --baseline: "passed" or "failed", and the baseline's id
  };
  // Newest first; all series when `series` is empty.
  std::vector<RunSummary> runs(const std::string& series, std::size_t limit);
  std::vector<std::string> series_names();

  // The whole run, raw samples included; nothing when there is no such run.
  std::optional<RunRecord> load(const std::string& id);

  // A run named by reference, within `series`, counting finished runs newest first:
  //   @last      the newest run
  //   @last~N    the run N before the newest
  //   @last-good the newest run in which no experiment failed, no required guess failed, and
  //              whose gate (when it was run against a baseline) passed
  //   @ID        the run with that id (any series)
  // The first three take a machine after a colon, "@last:H200": only runs whose machine (the
  // fingerprint of record.hpp: GPU, driver, CUDA runtime, CPU) holds that text, in any case, count.
  // Throws std::runtime_error saying what was looked for when there is none.
  std::string resolve(const std::string& reference, const std::string& series);
  // @each-machine: the newest finished run of `series` on each machine, the oldest of them first.
  // Throws std::runtime_error when there is none.
  std::vector<std::string> newest_on_each_machine(const std::string& series);

  // One experiment's metric over the runs of a series, oldest first.
  struct MetricPoint {
    std::string run, started, revision, machine;
    outcome::Stats stats;
  };
  std::vector<MetricPoint> metric_over_time(const std::string& series, const std::string& identity, const std::string& metric,
                                            std::size_t limit);

  // Every timing of the newest `runs` finished runs of a series on one machine (machine_fingerprint),
  // leaving out the runs `excluded`: by (identity, metric), oldest run first. What a comparison
  // learns the noise between processes from (compare.hpp: history_noise).
  PointRuns timings_over_time(const std::string& series, const std::string& machine, const std::vector<std::string>& excluded, std::size_t runs);
  // Every timing of the finished run of a series on one machine started last before run `run`
  // (started at `started`; it need not be recorded here), leaving out the runs `excluded`, by
  // (identity, metric); nothing when there is none. What tells a baseline that stands out alone
  // (compare.hpp: PointHistory::before_base).
  struct RunTimings {
    std::string run;
    std::map<std::pair<std::string, std::string>, outcome::Stats> timings;
  };
  std::optional<RunTimings> timings_before(const std::string& series, const std::string& machine, const std::string& run,
                                           const std::string& started, const std::vector<std::string>& excluded);

  // Wall times of the points `identities` of `series` that ran ok (WallTimes::From says which
  // runs count); empty when no run has them.
  WallTimes wall_times(const std::string& series, const std::vector<std::string>& identities, WallTimes::From from);
  // The gate's verdict of a run against its baseline (expr run --baseline).
  void set_gate(const std::string& run_id, const std::string& baseline, bool passed);

  // Stores a calibration and marks the runs it was made from; returns its id.
  std::int64_t record_calibration(const Calibration& calibration, const std::vector<std::string>& run_ids);
  // The newest calibration of the series on this machine (record.hpp: machine_fingerprint), per
  // point; empty when there is none.
  Noise noise(const std::string& series, const std::string& machine);

 private:
  void migrate();

  Database db_;
  int found_version_ = 0;
};

}  // namespace expr::history
