// Runs against runs: `expr compare` (a candidate against a baseline, the gate's verdict), `expr
// across` (runs of one series from several machines side by side) and `expr history` (the runs
// recorded, one experiment's figure over them with its steps); with what `expr run --baseline` and
// `expr calibrate` share with them: the gate's options and a run named by directory or reference.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "history/across.hpp"
#include "history/compare.hpp"
#include "history/store.hpp"
#include "session/options.hpp"
#include "session/status.hpp"

namespace expr::session {

// One --threshold, METRIC=FRACTION (gpu_time=3% or gpu_time=0.03); throws std::invalid_argument
// saying what is wrong with it. The command line checks each while it is parsed (cli/main.cpp).
std::pair<std::string, double> parse_threshold(const std::string& option);
// The gate's options from the command line, whose thresholds were checked while it was parsed.
history::CompareOptions gate_options(const GateArgs& args);
// A run directory, or a history reference (@last, @last~N, @last-good, @ID) resolved within
// `series`; throws std::runtime_error saying what was not found.
history::RunRecord load_run(const std::string& what, history::Store* store, const std::string& series);
// What the history tells of each point, into options.history: its noise learnt from the newest
// runs of the candidate's series on its machine in `store`, the two compared left out
// (history::history_noise), and, where both runs are of one machine, its figure in the run just
// before the baseline on it (history::PointHistory::before_base).
void learn_noise(history::Store& store, const history::RunRecord& base, const history::RunRecord& candidate, history::CompareOptions& options);

// `expr compare`; status regression when the gate fails. Stops with bad_input when a run cannot be
// found or the two cannot be compared.
struct Compared {
  history::Comparison comparison;
  Status status = Status::ok;
};
Compared compare(const CompareArgs& args);
// `expr across`. Stops with bad_input when a run cannot be found or the runs are of two series.
history::Across across(const AcrossArgs& args);
// Writes `text` to `file` (--markdown, --json, --html); stops with cannot_write when it cannot.
void write_view(const std::filesystem::path& file, const std::string& text);

// `expr history` without --experiment: the newest runs recorded.
struct RecordedRuns {
  std::filesystem::path file;
  std::vector<history::Store::RunSummary> runs;
};
// With --experiment: its metric over the runs, and the steps between consecutive runs of one machine.
struct FigureOverTime {
  std::filesystem::path file;
  std::string series;
  std::vector<history::Store::MetricPoint> points;
  std::vector<history::TimingComparison> steps;  // each tested as `expr compare` tests two runs, Holm over all
  double threshold = 0;                          // the smallest change that is a step
};
// Stop with bad_input when there is no history, or nothing of what was asked in it.
RecordedRuns recorded_runs(const HistoryArgs& args);
FigureOverTime figure_over_time(const HistoryArgs& args);
// The steps in `points`: each run against the one before it on the same machine, both with
// samples, decided with `thresholds` and `alpha` as a comparison decides.
std::vector<history::TimingComparison> steps(const std::vector<history::Store::MetricPoint>& points, const std::string& metric,
                                             const std::map<std::string, double>& thresholds, double alpha);

}  // namespace expr::session
