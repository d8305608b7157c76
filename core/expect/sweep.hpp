// Guesses about a whole sweep, written under an experiment's `sweep_expect:`:
//
//   slope(gpu_time, seq) ~ 2 ± 0.3              log-log least-squares slope of a metric over an axis
//   slope(gpu_time, seq, from=2048) ~ 2 ± 0.3   ... over the axis values from 2048 on (also to=)
//   monotonic(gpu_time, seq, increasing)        never falls (decreasing: never rises) as the axis grows
//   crossover(gpu_time, seq, sdpa_flash) ~ 2048 within 50%
//                                               the axis value where this family's metric overtakes
//                                               the other's (geometric interpolation between points)
//
// The metric is one metric of the expectation language (`gpu_time`, `kernel("gemm").duration`),
// evaluated on each point with analysis::evaluate. The sweep's other axes split it into groups, and
// each group gets its own verdict, named by the group's axis values.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/metrics.hpp"
#include "expect/check.hpp"
#include "series/axes.hpp"
#include "series/series.hpp"

namespace expr::expect {

// A sweep guess compiled: what it reads and what it guesses, bound to the family's axes.
struct CompiledSweepGuess {
  enum class Kind { slope, monotonic, crossover };
  series::GuessSpec spec;
  std::string family;
  Kind kind = Kind::slope;
  std::string metric_text;
  analysis::MetricCall metric;
  std::string axis;
  std::optional<double> from, to;  // slope: the part of the axis fitted
  bool increasing = true;          // monotonic
  std::string other;               // crossover: the family compared with
  Comparison comparison = Comparison::equal;
  double guessed = 0;
  std::optional<double> absolute, relative;  // tolerance of `~`
  std::string guessed_text;                  // "~ 2 ± 0.3", as written
};

// Compiles one sweep guess of `family`, whose points have `axes`; `families` are the series'
// experiment names. Adds the problem at the guess's place and returns nothing when it is wrong.
std::optional<CompiledSweepGuess> compile_sweep_guess(const series::GuessSpec& spec, const std::string& family,
                                              const std::vector<std::string>& axes, const std::vector<std::string>& families,
                                              std::vector<util::Problem>& problems);

// One point of the run, as a sweep guess reads it.
struct SweepPoint {
  std::string family;
  const series::AxisPoint* point;
  const outcome::Measurement* measurement;
};

// What a verdict rests on, in the axis's and the metric's own units, for a report to draw it on
// the plot of that metric over that axis.
struct SweepGeometry {
  struct Fit {
    double slope = 0, intercept = 0;  // log(metric) = intercept + slope · log(axis value)
    double from = 0, to = 0;          // the axis values of the first and last point fitted
  };
  std::optional<Fit> fit;                              // slope
  std::optional<std::pair<double, double>> crossing;   // crossover: (axis value, metric value) where they cross
  std::optional<std::pair<double, double>> broken;     // monotonic, contradicted: the axis values it breaks between
};

struct SweepJudgement {
  std::string group;  // the other axes' values, "dtype=bf16"; empty when the sweep has one axis
  Judgement judgement;
  SweepGeometry geometry;
};

std::vector<SweepJudgement> judge_sweep(const CompiledSweepGuess& guess, const std::vector<SweepPoint>& points);

}  // namespace expr::expect
