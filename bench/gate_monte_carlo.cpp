// The gate's error rates by simulation (issue 31): how often comparisons of unchanged builds fail
// the gate (the family-wise false-alarm rate, which should stay near alpha = 5%), and how often a
// real change is found, under the decision rule of history/compare.hpp as it is compiled here.
//
// The model of one figure in one run: the run moves the figure's median by a factor exp(sigma_run *
// N(0,1)) (the machine's state while the run lasts, the same for all its processes), each worker
// process (a round) by a further exp(sigma_between * N(0,1)), and its samples scatter around that
// median by exp(spread * N(0,1)). Samples of one process are therefore not independent draws of the
// figure, nor are the rounds of one run, which is what makes a test on samples or rounds alone
// raise false alarms between runs. Each trial compares m points (m tests under Holm), the baseline,
// the candidate and the history drawn afresh; a trial fails when any point is called slower or faster.
//
// Scenarios: (1) one round a side with the noise known from a calibration of k runs (default 5), as
// `expr calibrate` measures it; (2) a +25% change with one sample a side, which must never be
// called "same"; (3) R rounds a side, the noise between runs learnt from a history of 5 earlier
// runs (a nightly job's: no calibration): false alarms and the power to find a +5% change at sigma
// 0.5%; (4) the same on a machine whose runs move by more than their processes (sigma_run 2%);
// (5) a machine with two states, each run in one of them for its whole length (the CI machine's
// host times), with and without the run just before the baseline, which tells a baseline that
// stands out alone; (6) (3) to (5) decided as `expr run --baseline` decides, measuring once more
// the timings called slower or inconclusive where more samples can settle it, against `expr
// compare`, which cannot. The second measurement is drawn as a run of its own, in a machine state
// drawn afresh: it assumes the state that moved the first does not last until the second.
// Wherever there is a history its newest run is the one before the baseline.
//
//   expr_bench_gate [trials]       (fixed seed: the same figures each time)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "history/compare.hpp"
#include "runner/sampler.hpp"

using namespace expr;

namespace {

std::mt19937_64 rng(31);
std::normal_distribution<double> normal;

struct Figure {
  double sigma_run = 0;         // of log(median), between runs: moves all rounds of a run alike
  double sigma_between = 0.01;  // of log(median), between the processes of a run
  double spread = 0.02;         // of log(sample), within one process
  std::size_t samples = 20;     // per round
  std::size_t rounds = 1;
  // A second state of the machine: a run falls into it with probability `other_state_share`, which
  // moves all its rounds by the factor `other_state`.
  double other_state = 1, other_state_share = 0;
};
std::uniform_real_distribution<double> uniform;

// One run's figure: `rounds` processes of `samples` samples each, its true median `median`,
// summarised and combined as the runner does (runner/sampler.hpp).
outcome::Stats measure(const Figure& f, double median) {
  std::vector<outcome::Stats> rounds;
  const double state = uniform(rng) < f.other_state_share ? f.other_state : 1.0;
  const double run = median * state * std::exp(f.sigma_run * normal(rng));
  for (std::size_t r = 0; r < f.rounds; ++r) {
    const double process = run * std::exp(f.sigma_between * normal(rng));
    runner::Sampler round(outcome::Iterations{});
    for (std::size_t i = 0; i < f.samples; ++i) round.add(process * std::exp(f.spread * normal(rng)));
    rounds.push_back(round.stats(0));
  }
  return runner::combine_rounds(rounds);
}

// A calibration of k unchanged runs: the spread of their figures and its df, as `expr calibrate`
// stores them.
void calibrate(outcome::Stats& s, const Figure& f, std::size_t runs) {
  std::vector<double> figures;
  for (std::size_t k = 0; k < runs; ++k) figures.push_back(std::exp(analysis::log_figure(measure(f, 1000))));
  const auto noise = analysis::log_spread(figures);
  s.run_to_run = noise.sigma;
  s.run_to_run_df = noise.df;
}

struct Rates {
  std::size_t trials = 0, failed = 0;  // trials with any slower or faster
  std::size_t gate_failed = 0;         // trials with any slower: those the gate fails
  // The same trials decided without the run just before the baseline.
  std::size_t failed_without_run_before = 0, gate_failed_without_run_before = 0, slower_without_run_before = 0;
  std::size_t tests = 0, slower = 0, same = 0, inconclusive = 0;
};

// `trials` comparisons of m points, the candidate `factor` times the baseline; the noise between runs
// from a calibration of `calibration_runs` runs or a history of `history_runs` runs, whose newest
// is the run just before the baseline. `gated`: decided as `expr run --baseline` decides, the
// timings of Comparison::to_measure_again measured once more (in a run of their own) and the
// comparison made again; otherwise as `expr compare` decides.
Rates simulate(const Figure& f, std::size_t m, std::size_t trials, double factor, double threshold, std::size_t calibration_runs,
               std::size_t history_runs = 0, bool gated = false) {
  Rates r;
  for (std::size_t trial = 0; trial < trials; ++trial) {
    std::vector<history::TimingComparison> tests;
    std::vector<outcome::Stats> bases, candidates;
    std::vector<history::PointHistory> knowns;
    for (std::size_t i = 0; i < m; ++i) {
      auto base = measure(f, 1000), candidate = measure(f, 1000 * factor);
      if (calibration_runs > 0) {
        calibrate(base, f, calibration_runs);
        candidate.run_to_run = base.run_to_run;  // both runs carry the point's one calibration
        candidate.run_to_run_df = base.run_to_run_df;
      }
      std::vector<outcome::Stats> history;
      for (std::size_t k = 0; k < history_runs; ++k) history.push_back(measure(f, 1000));
      auto known = history::history_noise(history);
      if (!history.empty()) known.before_base = analysis::log_figure(history.back());
      tests.push_back(history::test_timing(fmt::format("p{}", i), "gpu_time", base, candidate, known));
      bases.push_back(base);
      candidates.push_back(candidate);
      knowns.push_back(known);
    }
    history::decide(tests, {{"gpu_time", threshold}}, 0.05);
    if (gated) {
      history::Comparison first;
      first.timings = tests;
      const auto again = first.to_measure_again();
      for (const auto& key : again) {
        const auto i = static_cast<std::size_t>(std::stoul(key.experiment.substr(1)));
        const auto calibrated = candidates[i];
        candidates[i] = measure(f, 1000 * factor);
        candidates[i].run_to_run = calibrated.run_to_run;
        candidates[i].run_to_run_df = calibrated.run_to_run_df;
      }
      if (!again.empty()) {
        history::Comparison second;
        for (std::size_t i = 0; i < m; ++i)
          second.timings.push_back(history::test_timing(fmt::format("p{}", i), "gpu_time", bases[i], candidates[i], knowns[i]));
        history::decide(second.timings, {{"gpu_time", threshold}}, 0.05);
        history::judge_second_measurement(first, second, again);
        tests = second.timings;
      }
    }
    auto without = tests;
    for (auto& t : without) t.base_from_before = t.candidate_from_before = NAN;
    history::decide(without, {{"gpu_time", threshold}}, 0.05);
    const auto is = [](history::Change change) { return [change](const history::TimingComparison& t) { return t.verdict == change; }; };
    const auto called = [](const history::TimingComparison& t) { return t.verdict == history::Change::slower || t.verdict == history::Change::faster; };
    const auto any = [](const auto& all, const auto& when) { return static_cast<std::size_t>(std::any_of(all.begin(), all.end(), when)); };
    const auto count = [](const auto& all, const auto& when) { return static_cast<std::size_t>(std::count_if(all.begin(), all.end(), when)); };
    ++r.trials;
    r.tests += tests.size();
    r.failed += any(tests, called);
    r.gate_failed += any(tests, is(history::Change::slower));
    r.slower += count(tests, is(history::Change::slower));
    r.same += count(tests, is(history::Change::same));
    r.inconclusive += count(tests, is(history::Change::inconclusive));
    r.failed_without_run_before += any(without, called);
    r.gate_failed_without_run_before += any(without, is(history::Change::slower));
    r.slower_without_run_before += count(without, is(history::Change::slower));
  }
  return r;
}

// The CPU series' host times on the CI machine: runs moving 3%, processes 5%, samples 5%, and with
// probability `share` a run in a second state `state` times as slow.
Figure two_states(double state, double share) {
  Figure f;
  f.sigma_run = 0.03;
  f.sigma_between = 0.05;
  f.spread = 0.05;
  f.rounds = 3;
  f.other_state = state;
  f.other_state_share = share;
  return f;
}

// "6.1% ± 0.5%": a proportion with its binomial standard error.
std::string proportion(std::size_t k, std::size_t n) {
  const double p = static_cast<double>(k) / static_cast<double>(n);
  return fmt::format("{:.1f}% ± {:.1f}%", 100 * p, 100 * std::sqrt(p * (1 - p) / static_cast<double>(n)));
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t trials = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2000;
  fmt::print("family-wise alpha 5%, {} trials per line (fixed seed)\n\n", trials);

  fmt::print("(1) one round a side, noise from a calibration of 5 runs (sigma between processes 1%, spread 2%, 20 samples), threshold 0:\n");
  for (const std::size_t m : {1, 20, 100}) {
    const auto r = simulate({}, m, trials, 1.0, 0.0, 5);
    fmt::print("  m = {:3}: false alarms (trials failing the gate) {}\n", m, proportion(r.failed, r.trials));
  }

  fmt::print("\n(2) a +25% change, one sample a side, calibrated (5 runs), threshold 3%:\n");
  {
    Figure one;
    one.samples = 1;
    const auto r = simulate(one, 20, trials / 10, 1.25, 0.03, 5);
    fmt::print("  m = 20: called same {} of {} (missed), slower {}, inconclusive {}\n", r.same, r.tests, r.slower, r.inconclusive);
  }

  fmt::print("\n(3) R rounds a side, noise between runs from a history of 5 runs (sigma between processes 0.5%, spread 1%, 20 samples a round):\n");
  for (const std::size_t rounds : {2, 3, 5}) {
    Figure f;
    f.sigma_between = 0.005;
    f.spread = 0.01;
    f.rounds = rounds;
    for (const std::size_t m : {20, 100}) {
      const auto a = simulate(f, m, trials, 1.0, 0.0, 0, 5);
      const auto b = simulate(f, m, trials, 1.0, 0.03, 0, 5);
      const auto power = simulate(f, m, trials / 10, 1.05, 0.03, 0, 5);
      fmt::print("  R = {}, m = {:3}: false alarms {} at threshold 0, {} at 3%; +5% found (slower) in {} of tests at threshold 3% ({} without the run "
                 "before the baseline)\n",
                 rounds, m, proportion(a.failed, a.trials), proportion(b.failed, b.trials), proportion(power.slower, power.tests),
                 proportion(power.slower_without_run_before, power.tests));
    }
  }

  fmt::print("\n(4) 3 rounds a side on a machine whose runs move 2% (sigma between processes 0.5%, spread 1%), threshold 0:\n");
  {
    Figure f;
    f.sigma_run = 0.02;
    f.sigma_between = 0.005;
    f.spread = 0.01;
    f.rounds = 3;
    for (const std::size_t history_runs : {0, 3, 5, 20}) {
      const auto r = simulate(f, 20, trials, 1.0, 0.0, 0, history_runs);
      fmt::print("  m = 20, a history of {:2} runs: false alarms {}, inconclusive {} of tests\n", history_runs, proportion(r.failed, r.trials),
                 proportion(r.inconclusive, r.tests));
    }
  }

  fmt::print("\n(5) 3 rounds a side on a machine with two states, a run in the other one with probability p (sigma between processes 5%, "
             "spread 5%, runs 3%), a history of 5 runs, threshold 10%, m = 2 (the CPU series' host times); trials called slower or faster, and "
             "trials failing the gate (slower), with the run just before the baseline and, for the same trials, without it:\n");
  for (const double state : {0.55, 1.8}) {
    for (const double share : {0.1, 0.2}) {
      const auto f = two_states(state, share);
      const auto r = simulate(f, 2, trials, 1.0, 0.1, 0, 5);
      fmt::print("  the other state x{}, p = {}: slower or faster {} (without {}), the gate failed {} (without {})\n", state, share,
                 proportion(r.failed, r.trials), proportion(r.failed_without_run_before, r.trials), proportion(r.gate_failed, r.trials),
                 proportion(r.gate_failed_without_run_before, r.trials));
    }
  }

  fmt::print("\n(6) as `expr run --baseline` gates, the timings called slower or inconclusive-but-settleable measured once more "
             "(a run of their own) before it decides, against `expr compare` on the same scenarios; trials failing the gate:\n");
  {
    Figure f;
    f.sigma_between = 0.005;
    f.spread = 0.01;
    f.rounds = 3;
    for (const bool gated : {false, true}) {
      const auto aa = simulate(f, 20, trials, 1.0, 0.03, 0, 5, gated);
      const auto power = simulate(f, 20, trials / 10, 1.05, 0.03, 0, 5, gated);
      fmt::print("  (3) R = 3, m = 20, threshold 3%, {}: unchanged {}, +5% found (slower) in {} of tests\n", gated ? "the gate     " : "expr compare",
                 proportion(aa.gate_failed, aa.trials), proportion(power.slower, power.tests));
    }
    f.sigma_run = 0.02;
    for (const bool gated : {false, true}) {
      const auto aa = simulate(f, 20, trials, 1.0, 0.0, 0, 5, gated);
      fmt::print("  (4) runs moving 2%, a history of 5 runs, threshold 0, {}: unchanged {}\n", gated ? "the gate     " : "expr compare",
                 proportion(aa.gate_failed, aa.trials));
    }
    f = two_states(1.8, 0.1);
    for (const bool gated : {false, true}) {
      const auto aa = simulate(f, 2, trials, 1.0, 0.1, 0, 5, gated);
      auto one_state = f;
      one_state.other_state_share = 0;
      const auto power = simulate(one_state, 2, trials / 10, 1.2, 0.1, 0, 5, gated);
      fmt::print("  (5) the other state x1.8, p = 0.1, {}: unchanged {}; +20% found (slower) in {} of tests on the machine in one state\n",
                 gated ? "the gate     " : "expr compare", proportion(aa.gate_failed, aa.trials), proportion(power.slower, power.tests));
    }
  }
  return 0;
}
