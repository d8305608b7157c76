// When timing stops, and what it reports.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "runner/sampler.hpp"

using expr::runner::Sampler;

namespace {
expr::outcome::Iterations criteria(int min_samples, double max_noise) { return {0, 0, min_samples, 0.0, 10.0, max_noise}; }
}  // namespace

TEST_CASE("sampling stops once the median is pinned down, not before min_samples") {
  Sampler s(criteria(10, 0.01));
  for (int i = 0; i < 9; ++i) {
    s.add(1000.0 + i % 3);
    CHECK_FALSE(s.done(0.0));
  }
  s.add(1000.0);
  CHECK(s.done(0.0));
  const auto stats = s.stats(0.0);
  CHECK(stats.converged);
  CHECK(stats.median == doctest::Approx(1001.0));
  CHECK(stats.min == 1000.0);
  CHECK(stats.max == 1002.0);
}

TEST_CASE("a heavy tail does not keep sampling from settling, and does not move the median") {
  Sampler s(criteria(20, 0.01));
  for (int i = 0; i < 200 && !s.done(0.0); ++i) s.add(i % 10 == 0 ? 50'000.0 : 1000.0 + i % 7);  // every tenth call preempted
  CHECK(s.done(0.0));
  const auto stats = s.stats(0.0);
  CHECK(stats.converged);
  CHECK(stats.median < 1010.0);
  CHECK(stats.max == 50'000.0);
}

TEST_CASE("the time budget ends sampling that does not converge, and says so") {
  Sampler s(criteria(5, 0.001));
  for (int i = 0; i < 50; ++i) s.add(i % 2 ? 1000.0 : 3000.0);
  CHECK_FALSE(s.done(1.0));
  CHECK(s.done(10.0));
  CHECK_FALSE(s.stats(10.0).converged);
}

TEST_CASE("a sample that is not a finite number is a failed measurement, refused with what it was") {
  Sampler s(criteria(5, 0.01));
  s.add(1000.0);
  CHECK_THROWS_WITH_AS(s.add(NAN), "timing sample 2 is NaN, not a time: the timer did not record it", std::invalid_argument);
  CHECK_THROWS_AS(s.add(std::vector<double>{1.0, INFINITY}), std::invalid_argument);
  CHECK_THROWS_AS(s.add(-INFINITY), std::invalid_argument);
}

TEST_CASE("rounds combine into one figure whose median is the rounds' median: one odd process does not move it") {
  std::vector<expr::outcome::Stats> rounds;
  for (const double level : {1000.0, 1010.0, 3000.0}) {  // the third process ran 3x slower
    Sampler s(criteria(4, 1.0));
    for (int i = 0; i < 4; ++i) s.add(level + i);
    rounds.push_back(s.stats(0.5));
  }
  const auto combined = expr::runner::combine_rounds(rounds);
  CHECK(combined.rounds == std::vector<double>{1001.5, 1011.5, 3001.5});
  CHECK(combined.median == 1011.5);
  CHECK(combined.samples.size() == 12);
  CHECK(combined.count == 12);
  CHECK(combined.seconds == doctest::Approx(1.5));
  CHECK(combined.min == 1000);
  CHECK(combined.max == 3003);
  CHECK(expr::runner::combine_rounds({rounds.front()}).median == 1001.5);
  CHECK(expr::runner::combine_rounds({}).count == 0);
}
