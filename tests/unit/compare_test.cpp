// The decision rule of `expr compare` and the gate (history/compare.hpp) on made-up figures: what it
// may call slower, same or inconclusive, and why, at the edges issue 31 found: one sample a side,
// tests that cannot reach their level, quantised timers, noise between processes and between runs
// estimated from a few values, an adjusted p-value exactly at alpha.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "history/compare.hpp"
#include "outcome/measurement_json.hpp"
#include "runner/sampler.hpp"

using namespace expr;
using history::Change;

namespace {

// A figure timed in `rounds` processes of `per_round` samples each, combined as the runner
// combines them; process r runs at median * (1 + step * (r - (rounds - 1) / 2)), its samples spread
// evenly by 1% around that.
outcome::Stats figure(double median, std::size_t per_round, std::size_t rounds = 1, double step = 0.01) {
  std::vector<outcome::Stats> processes;
  for (std::size_t r = 0; r < rounds; ++r) {
    const double process = median * (1 + step * (static_cast<double>(r) - static_cast<double>(rounds - 1) / 2));
    runner::Sampler round(outcome::Iterations{});
    for (std::size_t i = 0; i < per_round; ++i)
      round.add(process * (1 + 0.01 * (static_cast<double>(i) / std::max<double>(1, static_cast<double>(per_round - 1)) - 0.5)));
    processes.push_back(round.stats(0));
  }
  return runner::combine_rounds(processes);
}

// Noise between runs known from the history: sigma `sigma` with `df` degrees of freedom.
history::PointHistory runs_moving(double sigma, double df = 10) { return {{}, {sigma, df}}; }

history::TimingComparison judged(const outcome::Stats& base, const outcome::Stats& candidate, double threshold, std::size_t tests = 1,
                                 const history::PointHistory& history = {}) {
  std::vector<history::TimingComparison> all(tests, history::test_timing("e", "gpu_time", base, candidate, history));
  history::decide(all, {{"gpu_time", threshold}}, 0.05);
  return all.front();
}

}  // namespace

TEST_CASE("one sample a side is never the same: a single value bounds nothing") {
  outcome::Stats base, candidate;
  base.samples = {100};
  base.median = 100;
  candidate.samples = {102};
  candidate.median = 102;
  const auto t = judged(base, candidate, 0.03);
  CHECK(t.verdict == Change::inconclusive);
  CHECK(t.reason == "1 sample a side: the U test's smallest p here, 1, cannot reach 0.05 (alpha over 1 test)");
  CHECK(std::isinf(t.detectable));
}

TEST_CASE("too few samples for the U test to reach its level under Holm: inconclusive with the count, never same or passed silently") {
  // Four a side: the smallest two-sided p is 2/70 = 0.029, above 0.05 / 20. A +25% change cannot be found.
  const auto t = judged(figure(100, 4, 1), figure(125, 4, 1), 0.03, 20, runs_moving(0.01));
  CHECK(t.verdict == Change::inconclusive);
  CHECK(t.reason.starts_with("4 samples a side: the U test's smallest p here, 0.029, cannot reach 0.0025 (alpha over 20 tests)"));
  // Eight a side can, at 20 tests.
  CHECK(judged(figure(100, 8, 1), figure(125, 8, 1), 0.03, 20, runs_moving(0.01)).verdict == Change::slower);
}

TEST_CASE("with the noise between runs unknown nothing is slower or the same, whatever the rounds say, and the reason says what is missing") {
  const auto unknown = "noise between runs unknown: fewer than two other runs of it on this machine in the history, and no calibration (expr calibrate measures it)";
  const auto t = judged(figure(100, 50), figure(120, 50), 0.03);
  CHECK(t.p_adjusted < 1e-6);
  CHECK(t.verdict == Change::inconclusive);
  CHECK(t.reason == unknown);
  CHECK(!t.noise.known());
  // Three rounds a side that agree to 1% know how far processes move within a run, not how far a
  // machine slower for the whole candidate run moves it.
  const auto rounds = judged(figure(100, 20, 3), figure(120, 20, 3), 0.03);
  CHECK(rounds.processes.df == 4);
  CHECK(rounds.verdict == Change::inconclusive);
  CHECK(rounds.reason == unknown);
  // Nor is an unchanged figure the same: a slower machine could hide a faster build.
  CHECK(judged(figure(100, 50), figure(100, 50), 0.03).verdict == Change::inconclusive);
  CHECK(judged(figure(100, 50), figure(100, 50), 0.03, 1, runs_moving(0.001)).verdict == Change::same);
}

TEST_CASE("a calibration that saw no noise between processes is known, not missing: a slowdown beyond the threshold is slower") {
  // Five unchanged runs of a busy-waiting plugin on a quiet machine can have identical medians.
  auto base = figure(100, 50), candidate = figure(120, 50);
  candidate.run_to_run = 0;
  candidate.run_to_run_df = 4;
  const auto t = judged(base, candidate, 0.03);
  CHECK(t.noise.known());
  CHECK(t.noise_sources == "between runs: calibration");
  CHECK(t.floor == 0);
  CHECK(t.verdict == Change::slower);
  // And it survives results.json.
  const auto again = outcome::measurement_from_json(outcome::to_json([&] {
    outcome::Measurement m;
    m.host = candidate;
    return m;
  }()));
  REQUIRE(again.host);
  CHECK(analysis::calibrated(*again.host).known());
}

TEST_CASE("the noise is the further reaching of the rounds' spread over their number and the noise between runs") {
  // Three processes a side 1% apart (sigma of log(median) 1%, 4 degrees of freedom) and runs that
  // move 0.2% in the history: a run's figure moves 1% / sqrt(3) as far as the rounds tell.
  const auto t = judged(figure(100, 20, 3), figure(120, 20, 3), 0.03, 1, runs_moving(0.002));
  CHECK(t.processes.df == 4);
  CHECK(t.processes.sigma == doctest::Approx(0.01).epsilon(0.01));
  CHECK(t.noise.df == 4);
  CHECK(t.noise.sigma == doctest::Approx(t.processes.sigma / std::sqrt(3.0)));
  CHECK(t.noise_sources == "between processes: rounds");
  CHECK(t.floor == doctest::Approx(std::expm1(util::student_t_quantile(0.975, 4) * t.processes.sigma * std::sqrt(2.0 / 3))));
  CHECK(t.verdict == Change::slower);
  // A change within the floor is not, however significant its samples.
  const auto small = judged(figure(100, 20, 3, 0.03), figure(104, 20, 3, 0.03), 0.03, 1, runs_moving(0.002));
  CHECK(small.verdict == Change::inconclusive);
  CHECK(small.reason.starts_with("the change is within the noise floor"));
  // Rounds that agree to 0.1% in runs that move 20% between them (a machine slower for whole
  // runs, as the 2-core CI machine is): the noise between runs decides.
  const auto machine = judged(figure(100, 20, 3, 0.001), figure(130, 20, 3, 0.001), 0.03, 1, runs_moving(0.2));
  CHECK(machine.noise.sigma == 0.2);
  CHECK(machine.noise_sources == "between runs: history");
  CHECK(machine.verdict == Change::inconclusive);
  CHECK(machine.reason.starts_with("the change is within the noise floor"));
}

TEST_CASE("the noise floor takes Student's t with the estimate's degrees of freedom (SciPy: t.ppf(1 - 0.05/40, 4) = 6.7583)") {
  // exp(t sigma sqrt(2)) - 1 for the difference of two runs' figures.
  CHECK(history::noise_floor({0.01, 4}, 20, 0.05) == doctest::Approx(0.10029258230703712).epsilon(1e-8));
  CHECK(history::noise_floor({0.01 / std::sqrt(3.0), 4}, 1, 0.05) == doctest::Approx(0.022928487010339248).epsilon(1e-8));
  CHECK(std::isinf(history::noise_floor({}, 20, 0.05)));
}

TEST_CASE("sources of the noise pool: sum of squares over sum of degrees of freedom") {
  const auto p = analysis::pool({{0.01, 4}, {0.02, 1}, {}});
  CHECK(p.df == 5);
  CHECK(p.sigma == doctest::Approx(std::sqrt((1e-4 * 4 + 4e-4) / 5)));
  auto calibrated = figure(100, 20);
  calibrated.run_to_run = 0.01;
  calibrated.run_to_run_df = 4;
  const auto t = judged(figure(100, 20, 3), calibrated, 0.03, 1, {{0.01, 6}, {0.01, 6}});
  CHECK(t.processes.df == 2 + 6);  // the base's rounds, the history's
  CHECK(t.noise.df == 6 + 4);      // between runs: the history's, the calibration's
  CHECK(t.noise_sources == "between runs: history, calibration");
}

TEST_CASE("quantised samples: a zero-width median interval is widened to the timer's step, and all-equal samples bound nothing") {
  outcome::Stats base, candidate;
  for (int i = 0; i < 30; ++i) {
    base.samples.push_back(i % 10 == 0 ? 1001 : 1000);  // a 1 ns timer: the median's interval is [1000, 1000]
    candidate.samples.push_back(i % 10 == 0 ? 1001 : 1000);
  }
  base.median = candidate.median = 1000;
  const auto t = judged(base, candidate, 0.03, 1, runs_moving(0));
  CHECK(t.interval.low < 0);
  CHECK(t.interval.high > 0);
  CHECK(t.verdict == Change::same);  // within ±3% even widened by half a step
  const auto tight = judged(base, candidate, 0.0001, 1, runs_moving(0));
  CHECK(tight.verdict == Change::inconclusive);  // ±0.01% is inside the timer's step: not the same
  std::fill(base.samples.begin(), base.samples.end(), 1000.0);
  std::fill(candidate.samples.begin(), candidate.samples.end(), 1000.0);
  const auto equal = judged(base, candidate, 0.03, 1, runs_moving(0));
  CHECK(equal.verdict == Change::inconclusive);
  CHECK(equal.reason == "all 30 samples equal 1 µs: the timer's resolution, and so where the median lies, is unknown");
}

TEST_CASE("an adjusted p-value exactly at alpha is significant, as statsmodels rejects it") {
  std::vector<history::TimingComparison> tests(2, history::test_timing("e", "gpu_time", figure(100, 20, 3), figure(150, 20, 3), runs_moving(0.01)));
  tests[0].p = 0.025;  // Holm: 2 * 0.025 = 0.05
  tests[1].p = 0.05;   // 1 * 0.05 = 0.05
  history::decide(tests, {{"gpu_time", 0.03}}, 0.05);
  CHECK(tests[0].p_adjusted == 0.05);
  CHECK(tests[0].verdict == Change::slower);
  CHECK(tests[1].verdict == Change::slower);
}

TEST_CASE("a non-finite sample is refused, not compared") {
  auto bad = figure(100, 20);
  bad.samples[3] = NAN;
  CHECK_THROWS_AS(history::test_timing("e", "gpu_time", figure(100, 20), bad), std::invalid_argument);
}

TEST_CASE("the history's noise between runs comes from consecutive runs, which a step moves once") {
  // Four runs of three rounds each at 100, then four at 150.
  std::vector<outcome::Stats> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(figure(100, 20, 3));
  for (int i = 0; i < 4; ++i) runs.push_back(figure(150, 20, 3));
  const auto noise = history::history_noise(runs);
  // Between processes: each run's 99, 100 and 101, pooled over the eight runs.
  CHECK(noise.processes.df == 8 * 2);
  CHECK(noise.processes.sigma == doctest::Approx(0.01).epsilon(0.01));
  // Between runs: one difference of log(1.5) in seven, half their mean square; 2 * 7^2 / 20 df.
  CHECK(noise.runs.sigma == doctest::Approx(std::log(1.5) / std::sqrt(14.0)));
  CHECK(noise.runs.df == doctest::Approx(4.9));
  // The spread of the eight figures about their mean would count the step in every run: twice as large.
  std::vector<double> figures;
  for (const auto& r : runs) figures.push_back(std::exp(analysis::log_figure(r)));
  CHECK(analysis::log_spread(figures).sigma > 1.9 * noise.runs.sigma);
  // One run tells nothing between runs; runs of one round nothing between processes.
  CHECK(!history::history_noise({figure(100, 20, 3)}).runs.known());
  CHECK(!history::history_noise({figure(100, 20), figure(100, 20)}).processes.known());
  CHECK(history::history_noise({figure(100, 20), figure(100, 20)}).runs.sigma == 0);
}

TEST_CASE("a baseline that stands out alone from the run before it: a candidate back where that run was is inconclusive, not slower") {
  // The CI machine's case (docs/gates-measured.md): runs in its slow state near 8.3 ms, the
  // baseline alone in the fast one at 5 ms, the candidate back at 8.3 ms.
  auto history = runs_moving(0.04, 5);
  const auto base = figure(5, 20, 3, 0.05), candidate = figure(8.3, 20, 3, 0.05);
  REQUIRE(judged(base, candidate, 0.1, 1, history).verdict == Change::slower);
  history.before_base = analysis::log_figure(figure(8.2, 20, 3, 0.05));
  const auto t = judged(base, candidate, 0.1, 1, history);
  CHECK(t.verdict == Change::inconclusive);
  CHECK(t.reason.starts_with("against the run just before the baseline on this machine, the baseline moved beyond the noise floor and the candidate did not"));
  CHECK(t.base_from_before == doctest::Approx(5 / 8.2 - 1).epsilon(0.01));
  CHECK(t.candidate_from_before == doctest::Approx(8.3 / 8.2 - 1).epsilon(0.01));
  // More samples of the candidate would not tell: the gate does not measure it again, even where
  // its noise floor is within its threshold.
  history::Comparison c;
  c.timings = {judged(base, candidate, 0.2, 1, history)};
  REQUIRE(c.timings.front().reason == t.reason);
  REQUIRE(c.timings.front().floor <= 0.2);
  CHECK(c.to_measure_again().empty());
  // A candidate beyond the floor from that run too moved: slower.
  CHECK(judged(base, figure(12, 20, 3, 0.05), 0.1, 1, history).verdict == Change::slower);
  // A baseline that did not move from the run before it, or moved the same way as the change, is
  // no outlier the candidate returned from.
  history.before_base = analysis::log_figure(figure(5.1, 20, 3, 0.05));
  CHECK(judged(base, candidate, 0.1, 1, history).verdict == Change::slower);
  history.before_base = analysis::log_figure(figure(4, 20, 3, 0.05));
  CHECK(judged(base, candidate, 0.1, 1, history).verdict == Change::slower);
  // Faster alike: a baseline alone in the slow state, the candidate back in the fast one.
  history.before_base = analysis::log_figure(figure(5.1, 20, 3, 0.05));
  CHECK(judged(candidate, base, 0.1, 1, history).verdict == Change::inconclusive);
}

namespace {

// A point whose rounds agree to 0.1%, its candidate figure at `candidate` against a base of 100,
// decided alone and beside four unchanged points whose rounds scatter by `scatter` from one
// process to the next, all with runs that move 0.1% in the history.
std::pair<history::TimingComparison, history::TimingComparison> quiet_point_alone_and_beside(const char* metric, double candidate, double scatter,
                                                                                         double threshold) {
  const auto quiet_runs = runs_moving(0.001);
  std::vector<history::TimingComparison> tests{
      history::test_timing("quiet", metric, figure(100, 50, 3, 0.001), figure(candidate, 50, 3, 0.001), quiet_runs)};
  for (const char* name : {"a", "b", "c", "d"})
    tests.push_back(history::test_timing(name, metric, figure(100, 50, 3, scatter), figure(100, 50, 3, scatter), quiet_runs));
  auto alone = std::vector<history::TimingComparison>{tests.front()};
  history::decide(alone, {{metric, threshold}}, 0.05);
  history::decide(tests, {{metric, threshold}}, 0.05);
  return {alone.front(), tests.front()};
}

}  // namespace

TEST_CASE("a point whose rounds happen to agree is held to its metric's noise pooled over every point") {
  // Three rounds a side. The first point's rounds agree to 0.1% while its median moves by 30%; the
  // others' rounds scatter by 20% from one process to the next: alone the first would be slower,
  // beside them it is not.
  const auto [alone, beside] = quiet_point_alone_and_beside("host_time", 130, 0.2, 0.1);
  CHECK(alone.verdict == Change::slower);
  CHECK(beside.verdict == Change::inconclusive);
  CHECK(beside.noise_sources == "between processes: every point's, pooled");
  CHECK(beside.reason.starts_with("the change is within the noise floor"));
}

TEST_CASE("a point held to its metric's pooled noise is the same only where the interval of that noise stays within the threshold") {
  // The first point's rounds agree to 0.1% and its figure did not move; the others' rounds scatter
  // by 5%. Alone its interval is narrow and it is the same; held to the pooled noise its interval
  // is that noise's, wider than the 3% threshold, and it is not.
  const auto [alone, held] = quiet_point_alone_and_beside("gpu_time", 100, 0.05, 0.03);
  CHECK(alone.verdict == Change::same);
  CHECK(held.noise_sources == "between processes: every point's, pooled");
  CHECK(held.interval.high > 0.03);
  CHECK(held.verdict != Change::same);
}

TEST_CASE("timings inconclusive for one reason are reported on one line, the first three named") {
  history::Comparison c;
  for (const char* name : {"a", "b", "c", "d", "e"}) c.timings.push_back(history::test_timing(name, "gpu_time", figure(100, 20, 3), figure(120, 20, 3)));
  history::decide(c.timings, {{"gpu_time", 0.03}}, 0.05);
  const auto text = history::terminal_text(c, false);
  CHECK(text.find("a gpu_time, b gpu_time, c gpu_time and 2 more: inconclusive: noise between runs unknown") != std::string::npos);
  CHECK(text.find("d gpu_time: inconclusive") == std::string::npos);
  CHECK(history::markdown(c).find("- a gpu_time, b gpu_time, c gpu_time and 2 more: inconclusive: noise between runs unknown") != std::string::npos);
}

TEST_CASE("the gate measures once more what it called slower and what more samples can settle, judges only those again, and notes what the second measurement showed") {
  const auto base = figure(100, 20, 3);
  history::Comparison first;
  first.timings = {history::test_timing("slower", "gpu_time", base, figure(120, 20, 3), runs_moving(0.005)),
                   history::test_timing("same", "gpu_time", base, figure(100.5, 20, 3), runs_moving(0.005)),
                   history::test_timing("few", "gpu_time", figure(100, 4), figure(101, 4), runs_moving(0.005)),
                   history::test_timing("noisy", "host_time", base, figure(120, 20, 3), runs_moving(0.3)),
                   history::test_timing("unknown", "gpu_time", figure(100, 4), figure(101, 4))};
  const std::map<std::string, double> thresholds{{"gpu_time", 0.03}, {"host_time", 0.1}};
  history::decide(first.timings, thresholds, 0.05);
  REQUIRE(first.timings[0].verdict == Change::slower);
  REQUIRE(first.timings[1].verdict == Change::same);
  REQUIRE(first.timings[2].verdict == Change::inconclusive);
  REQUIRE(first.timings[3].verdict == Change::inconclusive);
  REQUIRE(first.timings[3].floor > 0.1);
  REQUIRE(first.timings[4].verdict == Change::inconclusive);
  REQUIRE(!first.timings[4].noise.known());
  // Slower, to be confirmed; too few samples, to be settled. Not the same, not a timing whose noise
  // alone is beyond its threshold, and not one whose noise between runs is unknown, too few samples
  // or not: another measurement of the run would not change what they say.
  CHECK(first.to_measure_again() == std::vector<history::TimingKey>{{"slower", "gpu_time"}, {"few", "gpu_time"}});

  auto again = first;
  again.timings[0] = history::test_timing("slower", "gpu_time", base, figure(100.2, 20, 3), runs_moving(0.005));
  history::decide(again.timings, thresholds, 0.05);
  REQUIRE(again.timings[0].verdict == Change::same);
  // A timing not measured again keeps its first verdict, whatever the others' new figures did to
  // the pooled noise and Holm's order: it still has one measurement.
  again.timings[1].verdict = Change::slower;
  history::judge_second_measurement(first, again, first.to_measure_again());
  CHECK(again.timings[1].verdict == Change::same);
  REQUIRE(again.notes.size() == 1);
  CHECK(again.notes[0] == "slower gpu_time: slower at first (+20.00%), same measured once more (+0.20%): not a regression until two measurements show it");
  CHECK(!again.regression());

  auto confirmed = first;
  history::judge_second_measurement(first, confirmed, first.to_measure_again());
  CHECK(confirmed.notes == std::vector<std::string>{"slower gpu_time: slower in both measurements (+20.00%, then +20.00%)"});
  CHECK(confirmed.regression());
}
