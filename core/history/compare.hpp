// A candidate run against a baseline, experiment by experiment, for `expr compare` and the gate of
// `expr run --baseline`.
//
// Timing: for each experiment and each timing with raw samples (gpu_time, host_time), the
// Mann-Whitney U test on the two sets of samples (no assumption about their distribution: timings
// are skewed and heavy-tailed), with Holm's correction over every test of the comparison, so that
// the chance of any false alarm in a thousand-point sweep stays below alpha. A significant
// difference is not enough: the change of the median must also exceed the metric's threshold (the
// series' `gates:`), raised where the point was calibrated to what its run-to-run noise can
// produce by chance. The verdict:
//   slower / faster  significant after Holm, and the change is beyond the threshold;
//   same             the change's interval lies within the threshold on both sides;
//   inconclusive     neither: the samples cannot tell a change of the threshold's size from none.
// Structure: every difference in the trace's structural figures (analysis/structure.hpp), whatever
// the timing says: more copies, kernels, memsets, ops or ranges, a lower occupancy, or another main
// kernel, footprint or launch API is a regression; fewer is an improvement.
// The gate fails on a slower timing, a structural regression (unless the gates turn structure
// off), an experiment that ran in the baseline and failed in the candidate, or one of the baseline
// missing from the candidate (a nightly job must notice a vanished or renamed experiment); never
// on an improvement, a "same" or an inconclusive point. Runs of different series, or with no
// experiment in common, are not compared at all: a gate over nothing would pass.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "history/record.hpp"
#include "util/statistics.hpp"

namespace expr::history {

enum class Change { faster, slower, same, inconclusive };
std::string_view to_string(Change change);

struct CompareOptions {
  std::map<std::string, double> thresholds;  // per metric, over the candidate's series gates
  std::optional<bool> structure;             // over the gates: structural changes fail the gate
  double alpha = 0.05;                       // family-wise, over all tests of the comparison
  bool across_environments = false;          // compare even when the machines differ
};

struct TimingComparison {
  std::string experiment, metric;
  double base_median = 0, candidate_median = 0;
  std::size_t base_samples = 0, candidate_samples = 0;
  double change = 0;          // candidate / base - 1
  util::Interval interval;    // of the change, at analysis::timing_confidence
  double p = 1, p_adjusted = 1;
  double run_to_run = 0;      // the calibrated noise used; 0 when the point was not calibrated
  double threshold = 0;       // the smallest change that counts here
  Change verdict = Change::inconclusive;
};

struct StructuralChange {
  std::string experiment, figure, base, candidate, detail;
  bool regression = true;  // false: an improvement
};

struct RunLabel {
  std::string id, revision, started, run_dir, series_file;
};

struct Comparison {
  std::string series;
  RunLabel base, candidate;
  std::vector<EnvironmentDifference> environment;  // machine differences only when compared across them
  std::vector<TimingComparison> timings;
  std::vector<StructuralChange> structure;
  std::vector<std::string> failed;  // experiments that ran in the baseline and failed in the candidate, with why
  std::vector<std::string> missing;  // experiments of the baseline that the candidate does not have
  std::vector<std::string> notes;   // experiments on one side only, parameters that differ, timings without samples
  std::map<std::string, double> thresholds;
  bool structure_gated = true;
  double alpha = 0.05;

  std::size_t count(Change change) const;
  std::size_t structural_regressions() const;
  bool regression() const;  // the gate fails
  // The timings still inconclusive, for re-measuring.
  std::vector<std::string> inconclusive_experiments() const;
};

// One timing of one experiment tested, before the verdict: the change, its interval, the U test's
// p-value. Both sets of samples must be non-empty with a positive median.
TimingComparison test_timing(const std::string& experiment, const std::string& metric, const outcome::Stats& base,
                             const outcome::Stats& candidate);
// The largest change of a median between two runs of an unchanged build that the point's run-to-run
// noise alone produces at the family-wise alpha over `tests` tests: exp(z(1 - alpha/2m) sqrt(2)
// run_to_run) - 1. A comparison never calls a smaller change slower or faster.
double noise_floor(double run_to_run, std::size_t tests, double alpha);
// The verdict of each test, tested together: Holm's adjustment over all of them, then the threshold
// of its metric (raised by its run-to-run noise where calibrated).
void decide(std::vector<TimingComparison>& tests, const std::map<std::string, double>& thresholds, double alpha);

// Two runs that cannot be compared: of different series, with no experiment in common, or from
// different machines (EnvironmentMismatch). `expr compare` and `run --baseline` exit with 2.
class Incomparable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Two runs on different machines (record.hpp: machine_keys) measure different things.
class EnvironmentMismatch : public Incomparable {
 public:
  using Incomparable::Incomparable;
};

// Throws Incomparable when the baseline is a run of another series than the candidate's, so that
// `run --baseline DIR` can refuse before anything runs.
void check_same_series(const std::string& base_series, const std::string& candidate_series);

// Throws Incomparable for runs of different series or with no experiment in common, and
// EnvironmentMismatch, naming every machine key that differs, unless across_environments.
Comparison compare(const RunRecord& base, const RunRecord& candidate, const CompareOptions& options);

// The comparison for a terminal (color when it is one) and as Markdown: the timing table with each
// change and its interval, the structural changes with their cause in the trace, the environment's
// differences, the verdict of the gate, and for each regression the command that measures that
// point again.
std::string terminal_text(const Comparison& c, bool color);
std::string markdown(const Comparison& c);

}  // namespace expr::history
