// What `expr run` settles before it measures anything: the history it records in, the series (one
// shard of it, with --shard), the run directory and, for `--resume`, the run taken up again with
// the points that already have a result.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "history/store.hpp"
#include "report/assembler.hpp"
#include "report/run_directory.hpp"
#include "session/loaded_series.hpp"
#include "session/options.hpp"

namespace expr::session {

struct PreparedRun {
  std::unique_ptr<history::Store> store;  // null with --no-history, or a dry run without a history file
  LoadedSeries loaded;
  report::RunRequest request;
  std::optional<report::RunDirectory> dir;  // absent for a dry run
  // Resuming: the lock taken before the run was read, so that no other run writes it meanwhile,
  // held until the run has written everything (none for a dry run); the run with its identity
  // kept; the points that have a result; the revision of expr that started it.
  std::optional<report::RunLock> lock;
  report::RunResult run;
  std::vector<report::FinishedExperiment> restored;
  std::vector<std::string> left;  // the points to run, in plan order
};

// The run `earlier` (read from its directory `dir`) taken up again with the series as `loaded`
// states it now: the run keeps its identity, start and environment, and notes this resumption;
// each point with a result is restored with its guesses as the series states them now; the
// others are left to run. `series_file` is the series as the user named it, empty for the run's own.
// `loaded` must plan every point with a result (report::changed_points).
PreparedRun resume_from(report::RunResult earlier, LoadedSeries loaded, const std::filesystem::path& dir, const std::string& series_file);

// Opens the history (stops with cannot_write when it cannot be used: a file that cannot be used
// stops the run here, not after an hour of measuring), reads the series or the run to resume, and
// names the run directory. Stops with bad_input on a wrong series, option or run directory, and
// with cannot_write when a run to resume is held by another. A dry run reads a history that is
// there, creates none and locks nothing.
PreparedRun prepare_run(const RunArgs& args);

}  // namespace expr::session
