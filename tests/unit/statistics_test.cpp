// The statistics behind `expr compare` and the guesses about timings, against values worked out by
// hand or found in tables.
#include <doctest/doctest.h>

#include <numeric>

#include "util/statistics.hpp"

using namespace expr::util;

namespace {
std::vector<double> range(double from, double to) {
  std::vector<double> v;
  for (double x = from; x <= to; ++x) v.push_back(x);
  return v;
}
}  // namespace

TEST_CASE("the median's interval comes from the order statistics the binomial table gives") {
  // The textbook 95% interval for n = 100 runs from the 40th to the 61st value.
  const auto i = median_interval(range(1, 100), 0.95);
  CHECK(i.low == 40);
  CHECK(i.high == 61);
  // Five samples are too few for 95% (min and max cover 1 - 2/32 = 93.75%): the whole range.
  const auto few = median_interval({5, 1, 4, 2, 3}, 0.95);
  CHECK(few.low == 1);
  CHECK(few.high == 5);
  // Six are enough for [min, max] at 96.9%.
  CHECK(median_interval(range(1, 6), 0.95).low == 1);
  CHECK(median_interval(range(1, 20), 0.95).low == 6);  // P(B <= 5) = 2.07% for n = 20
  CHECK(median_interval(range(1, 20), 0.95).high == 15);
}

TEST_CASE("the normal quantile and the median") {
  CHECK(normal_quantile(0.975) == doctest::Approx(1.959964).epsilon(1e-6));
  CHECK(normal_quantile(0.5) == doctest::Approx(0.0).epsilon(1e-12));
  CHECK(normal_quantile(1 - 0.05 / 2000) == doctest::Approx(4.0556).epsilon(1e-4));
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(standard_deviation({2, 4, 4, 4, 5, 5, 7, 9}) == doctest::Approx(2.13809).epsilon(1e-5));
}

TEST_CASE("Mann-Whitney U: exact for small samples, normal with ties and large ones") {
  // Two sets of five with no overlap: 1 arrangement of 252 on each side.
  CHECK(mann_whitney_p(range(1, 5), range(6, 10)) == doctest::Approx(2.0 / 252));
  CHECK(mann_whitney_p(range(6, 10), range(1, 5)) == doctest::Approx(2.0 / 252));
  // Interleaved sets are indistinguishable.
  CHECK(mann_whitney_p({1, 3, 5, 7}, {2, 4, 6, 8}) > 0.5);
  // Three against three can never reach 5%: the smallest two-sided p is 2/20.
  CHECK(mann_whitney_p({1, 2, 3}, {4, 5, 6}) == doctest::Approx(0.1));
  // Large and apart: z = (450 - 0.5) / sqrt(30 * 30 / 12 * 61), p about 3e-11.
  CHECK(mann_whitney_p(range(1, 30), range(31, 60)) < 1e-9);
  // The same values with ties on both sides: nothing to tell apart.
  CHECK(mann_whitney_p({1, 1, 2, 2, 3, 3}, {1, 1, 2, 2, 3, 3}) == doctest::Approx(1.0));
  CHECK(mann_whitney_p({}, {1.0}) == 1.0);
  CHECK(mann_whitney_p({5, 5, 5}, {5, 5, 5}) == 1.0);
}

TEST_CASE("Holm's adjustment steps down through the sorted p-values") {
  const auto a = holm_adjust({0.01, 0.04, 0.03});
  CHECK(a[0] == doctest::Approx(0.03));
  CHECK(a[1] == doctest::Approx(0.06));  // 0.04 * 1, but never below the adjusted value before it
  CHECK(a[2] == doctest::Approx(0.06));
  CHECK(holm_adjust({0.9, 0.8})[0] == 1.0);
  CHECK(holm_adjust({}).empty());
}
