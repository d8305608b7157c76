// A candidate run against a baseline, experiment by experiment, for `expr compare` and the gate of
// `expr run --baseline`.
//
// Timing: for each experiment and each timing with raw samples (gpu_time, host_time), the
// Mann-Whitney U test on the two sets of samples (no assumption about their distribution: timings
// are skewed and heavy-tailed), with Holm's correction over every test of the comparison, so that
// the chance of any false alarm in a thousand-point sweep stays below alpha. Samples of one worker
// process are not independent draws of the figure: what differs between two runs is mostly the
// process. So a significant difference is not enough: the change of the median must also exceed
// the metric's threshold (the series' `gates:`) and the noise floor, the largest change that the
// figure's noise between processes produces by chance at the family-wise alpha. That noise, sigma
// of log(median), is pooled from the rounds of both runs (one process each), earlier runs of the
// point in the history, and the point's calibration; with an estimate from few values the floor
// takes Student's t quantile with its degrees of freedom. The verdict:
//   slower / faster  significant after Holm, the change beyond the threshold, and the change of the
//                    round medians' geometric mean beyond the floor, the same way; unless the
//                    baseline alone stands out: against the run just before it on the machine, the
//                    baseline moved the other way beyond the floor and the candidate not beyond
//                    the floor and threshold (an outlier baseline, or a candidate that undoes what
//                    only the baseline shows: one more run tells which);
//   same             the change's interval (the samples' and the noise between processes') lies
//                    within the threshold on both sides;
//   inconclusive     neither, with its reason: too few samples for the test or the interval, the
//                    noise between runs unknown, a baseline that stands out alone, or a change the
//                    data cannot place.
// Structure: every difference in the trace's structural figures (analysis/structure.hpp), whatever
// the timing says: more copies, kernels, memsets, ops or ranges, a lower occupancy, or another main
// kernel, footprint or launch API is a regression; fewer is an improvement.
// The gate fails on a slower timing, a structural regression (unless the gates turn structure
// off), an experiment that ran in the baseline and failed in the candidate, or one of the baseline
// missing from the candidate (a nightly job must notice a vanished or renamed experiment); never
// on an improvement, a "same" or an inconclusive point. Runs of different series, or with no
// experiment in common, are not compared at all: a gate over nothing would pass.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/noise.hpp"
#include "history/record.hpp"
#include "util/statistics.hpp"

namespace expr::history {

enum class Change { faster, slower, same, inconclusive };
std::string_view to_string(Change change);

// What other runs of a point on one machine tell: how far the figure moved between the worker
// processes of each run and between the runs (history_noise), and the figure of the run just
// before the baseline, which tells a baseline that stands out alone from a candidate that moved.
struct PointHistory {
  analysis::Noise processes;
  analysis::Noise runs;
  double before_base = NAN;  // analysis::log_figure of the run just before the baseline; NaN without one
};

struct CompareOptions {
  std::map<std::string, double> thresholds;  // per metric, over the candidate's series gates
  std::optional<bool> structure;             // over the gates: structural changes fail the gate
  double alpha = 0.05;                       // family-wise, over all tests of the comparison
  bool across_environments = false;          // compare even when the machines differ
  // What other runs of each point in the history tell, by (experiment identity, metric); empty
  // without a history.
  std::map<std::pair<std::string, std::string>, PointHistory> history;
  std::string run_before_base;  // the id of the run PointHistory::before_base comes from; empty when none
};

struct TimingComparison {
  std::string experiment, metric;
  double base_median = 0, candidate_median = 0;
  std::size_t base_samples = 0, candidate_samples = 0;
  std::size_t base_rounds = 1, candidate_rounds = 1;  // worker processes that timed it
  double change = 0;          // candidate / base - 1
  // The change of the geometric mean of the round medians: what the noise floor bounds (the mean
  // of R values, whose spread sigma sqrt(1/R) the floor assumes; their median scatters more). The
  // same as `change` with one round a side.
  double round_change = 0;
  util::Interval interval;    // of the change, at analysis::timing_confidence; unbounded where the data cannot bound it
  // How far below and above log(candidate median / base median) the samples alone put it: both
  // medians' intervals combined; infinite where the samples cannot bound it. The interval adds the
  // noise between runs to these.
  double samples_below = INFINITY, samples_above = INFINITY;
  double p = 1, p_adjusted = 1;
  double min_p = 1;           // the smallest p the U test can give at these sample sizes
  // Sigma of log(median) between the worker processes of one run: both runs' rounds and the
  // history's, pooled.
  analysis::Noise processes;
  std::string process_sources;  // "rounds, history": where `processes` comes from
  // Sigma of log(figure) between runs of an unchanged build: the history's and the calibration's
  // estimates, pooled; unknown without either.
  analysis::Noise runs;
  std::string run_sources;  // "history, calibration": where `runs` comes from
  // Sigma of log(figure) between runs for runs of these rounds, as the noise floor takes it: of
  // `runs` and what the processes give (processes.sigma sqrt((1/Rb + 1/Rc) / 2)), the one whose
  // bound reaches further; unknown where `runs` is, since a run's rounds cannot see a machine that
  // is slower for the whole run. Each is raised to its metric's estimate pooled over every point
  // of the comparison where that is larger (decide).
  analysis::Noise noise;
  std::string noise_sources;  // "between runs: history, calibration", "between processes: rounds": what `noise` is; empty when unknown
  double floor = 0;           // the noise floor: the largest change the noise alone produces at the family-wise alpha; inf when unknown
  // The changes of the baseline and of the candidate from the run just before the baseline on this
  // machine (of the round medians' geometric means, as round_change); NaN without that run.
  double base_from_before = NAN, candidate_from_before = NAN;
  double threshold = 0;       // the smallest change that counts here: the metric's threshold
  double detectable = 0;      // the smallest change this comparison could call slower or faster; inf when none
  Change verdict = Change::inconclusive;
  std::string reason;         // why, when inconclusive
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
  std::vector<std::string> notes;   // experiments on one side only, parameters that differ, timings without samples, the run before the baseline
  std::map<std::string, double> thresholds;
  bool structure_gated = true;
  double alpha = 0.05;

  std::size_t count(Change change) const;
  // Timings whose comparison could not detect a change of their threshold's size.
  std::size_t blind() const;
  std::size_t structural_regressions() const;
  bool regression() const;  // the gate fails
  // The timings the gate measures once more before it decides: each called slower, which a second
  // measurement must call slower too (one run alone in a slower state of the machine than any
  // before it looks like a regression), and each inconclusive that more samples could settle (its
  // noise between runs known, and too few samples or its noise floor within its threshold). In the
  // order of `timings`.
  std::vector<TimingKey> to_measure_again() const;
};

// The comparison `again`, made again after the timings `taken` (first.to_measure_again()) were
// measured once more, as the gate decides on it: a timing not measured again keeps its verdict
// from `first` (the others' new figures may move the pooled noise and Holm's order, but it has
// one measurement and keeps what that said), and the notes say, for each timing `first` called
// slower, whether the second measurement showed it too.
void judge_second_measurement(const Comparison& first, Comparison& again, const std::vector<TimingKey>& taken);

// One timing of one experiment tested, before the verdict: the change, its interval, the U test's
// p-value, and its noise (TimingComparison::noise) from both runs' rounds, `history` (other runs of
// the point) and the point's calibration. Both sets of samples must be non-empty with a positive
// median; non-finite samples are refused (std::invalid_argument).
TimingComparison test_timing(const std::string& experiment, const std::string& metric, const outcome::Stats& base,
                             const outcome::Stats& candidate, const PointHistory& history = {});
// The largest change between the figures of two runs of an unchanged build that noise `noise`
// (sigma of log(figure) between runs) alone produces at the family-wise alpha over `tests` tests:
// exp(t_df(1 - alpha/2m) sigma sqrt(2)) - 1, t_df Student's t quantile with the estimate's degrees
// of freedom. Infinite when the noise is unknown. A comparison never calls a smaller change slower
// or faster.
double noise_floor(const analysis::Noise& noise, std::size_t tests, double alpha);
// The verdict of each test, tested together: Holm's adjustment over all of them, then the threshold
// of its metric and its noise floor; the detectable change of each.
void decide(std::vector<TimingComparison>& tests, const std::map<std::string, double>& thresholds, double alpha);

// A point's noise from its other runs on one machine (oldest first; the runs being compared left
// out): the spread of each run's rounds, pooled, and the spread between the runs
// (analysis::between_runs, which a step in the history moves once).
PointHistory history_noise(const std::vector<outcome::Stats>& runs);
// Each point's history_noise into options.history, from other runs of the points by (identity,
// metric), oldest first.
using PointRuns = std::map<std::pair<std::string, std::string>, std::vector<outcome::Stats>>;
void learn_history(const PointRuns& runs, CompareOptions& options);

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
// The same as a section of a page (report.html's "Against the baseline"): the verdict, the
// timings called slower or faster, why the inconclusive ones are, the notes, the structural changes
// and the commands.
std::string html_section(const Comparison& c);
// That section as one page that opens offline like report.html (`expr compare --html`).
std::string html(const Comparison& c);
// "REGRESSION, the gate fails: 1 slower, …" or "no regression, the gate passes: …": the verdict
// and the count of each kind of change, the line both of them end with.
std::string verdict_line(const Comparison& c);

}  // namespace expr::history
