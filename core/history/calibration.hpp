// `expr calibrate`: how often the gate raises a false alarm on this machine, measured by running an
// unchanged build several times (an A/A test), and how far each point's median moves between runs
// by itself. The history keeps the result; later runs of the series on the same machine carry each
// point's run-to-run noise in their timings (outcome::Stats::run_to_run), which widens the intervals
// of guesses about timings (analysis/noise.hpp) and raises the point's threshold in comparisons
// (compare.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "history/compare.hpp"

namespace expr::history {

struct PointNoise {
  std::string experiment, metric;
  double run_to_run = 0;        // standard deviation of log(figure) over the runs, a run's figure the geometric mean of its round medians
  std::size_t runs = 0;         // runs it is computed from
  double df = 0;                // its degrees of freedom: the runs, less one
  std::size_t false_alarms = 0;  // pairs of runs whose comparison called it slower or faster
  std::size_t inconclusive = 0;  // pairs that could not tell
  std::size_t pairs = 0;
  double detectable = 0;  // the smallest change a comparison of two such runs reports here: its threshold, raised by the noise floor
};

struct Calibration {
  std::string series, machine, created;
  std::size_t runs = 0;
  double alpha = 0.05;
  std::map<std::string, double> thresholds;
  std::vector<PointNoise> noise;
  std::size_t pairs = 0;             // comparisons made: every pair of runs
  std::size_t failing_pairs = 0;     // pairs whose gate would have failed
  std::size_t structural_alarms = 0;  // structural changes seen between unchanged runs

  // Per metric: false alarms and comparisons over every point and pair.
  std::map<std::string, std::pair<std::size_t, std::size_t>> false_alarm_rate() const;
};

// Compares every pair of `runs` (all of one series, unchanged build, one machine) with the gate's
// options, and measures each point's run-to-run noise. Needs at least two runs.
Calibration calibrate(const std::vector<RunRecord>& runs, const CompareOptions& options);

std::string terminal_text(const Calibration& c);
std::string markdown(const Calibration& c);

}  // namespace expr::history
