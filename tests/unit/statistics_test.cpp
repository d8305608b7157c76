// The statistics behind `expr compare` and the guesses about timings, against values worked out by
// hand or found in tables, and against reference values SciPy and statsmodels computed once
// (tests/data/statistics/make_reference.py; CI has neither, so the values are stored).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

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

TEST_CASE("non-finite values are refused, not ranked: a NaN once made the U test loop forever") {
  for (const double bad : {NAN, INFINITY, -INFINITY}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(mann_whitney_p({1, 2, bad}, {3, 4, 5}), std::invalid_argument);
    CHECK_THROWS_AS(mann_whitney_p({1, 2, 3}, {bad}), std::invalid_argument);
    CHECK_THROWS_AS(holm_adjust({0.01, bad, 0.5}), std::invalid_argument);
    CHECK_THROWS_AS(median({1, bad, 3}), std::invalid_argument);
    CHECK_THROWS_AS(median_interval({1, bad, 3, 4, 5, 6}, 0.95), std::invalid_argument);
    CHECK_THROWS_AS(standard_deviation({1, bad}), std::invalid_argument);
    CHECK_THROWS_AS(normal_quantile(bad), std::invalid_argument);
    CHECK_THROWS_AS(student_t_quantile(bad, 4), std::invalid_argument);
    CHECK_THROWS_AS(student_t_quantile(0.9, bad), std::invalid_argument);
  }
  CHECK_THROWS_AS(student_t_cdf(NAN, 4), std::invalid_argument);
  CHECK(student_t_cdf(-INFINITY, 4) == 0);  // an infinite x has a probability
  // The message says which value.
  try {
    mann_whitney_p({1, NAN}, {2});
    FAIL("a NaN was ranked");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "samples must be finite numbers, and value 2 of 2 is NaN");
  }
}

TEST_CASE("one small side is tested exactly, as SciPy does: the normal approximation is far too conservative there") {
  // 1 sample against 60, the one above all 60: exactly 2/61 (SciPy 0.0328), not the normal 0.094.
  CHECK(mann_whitney_p({100}, range(1, 60)) == doctest::Approx(2.0 / 61));
  // The smallest p each size can reach: a test below five samples a side can never pass 5%.
  CHECK(mann_whitney_min_p(1, 1) == 1.0);
  CHECK(mann_whitney_min_p(2, 2) == doctest::Approx(1.0 / 3));
  CHECK(mann_whitney_min_p(3, 3) == doctest::Approx(0.1));
  CHECK(mann_whitney_min_p(4, 4) == doctest::Approx(2.0 / 70));
  CHECK(mann_whitney_min_p(0, 4) == 1.0);
}

TEST_CASE("the t quantile is wider than the normal one by what a few values cost") {
  CHECK(student_t_quantile(0.975, 4) == doctest::Approx(2.776445).epsilon(1e-6));
  CHECK(student_t_quantile(0.025, 4) == doctest::Approx(-2.776445).epsilon(1e-6));
  CHECK(student_t_quantile(0.975, 1) == doctest::Approx(12.7062).epsilon(1e-5));
  CHECK(student_t_cdf(0, 3) == doctest::Approx(0.5));
  CHECK(median_interval_min_samples(0.95) == 6);
}

namespace {

// Agreement with a reference value: relative, and absolute (1e-14) for values near zero.
bool agrees(double ours, double reference, double relative) {
  return std::fabs(ours - reference) <= std::max(relative * std::fabs(reference), 1e-14);
}

const nlohmann::json& reference() {
  static const auto j = [] {
    std::ifstream in(EXPR_SOURCE_DIR "/tests/data/statistics/reference.json");
    REQUIRE(in);
    return nlohmann::json::parse(in);
  }();
  return j;
}

}  // namespace

TEST_CASE("the statistics agree with SciPy and statsmodels (tests/data/statistics/make_reference.py)") {
  const auto& r = reference();
  REQUIRE(r.at("mann_whitney").size() > 50);
  for (const auto& c : r.at("mann_whitney")) {
    const auto a = c.at("a").get<std::vector<double>>(), b = c.at("b").get<std::vector<double>>();
    CAPTURE(a.size());
    CAPTURE(b.size());
    CAPTURE(c.at("method").get<std::string>());
    CHECK(agrees(mann_whitney_p(a, b), c.at("p"), 1e-9));
  }
  for (const auto& c : r.at("mann_whitney_min_p")) {
    CAPTURE(c.dump());
    CHECK(agrees(mann_whitney_min_p(c.at("m"), c.at("n")), c.at("p"), 1e-9));
  }
  for (const auto& c : r.at("holm")) {
    const auto adjusted = holm_adjust(c.at("p").get<std::vector<double>>());
    const auto expected = c.at("adjusted").get<std::vector<double>>();
    const auto reject = c.at("reject").get<std::vector<bool>>();
    REQUIRE(adjusted.size() == expected.size());
    for (std::size_t i = 0; i < adjusted.size(); ++i) {
      CHECK(agrees(adjusted[i], expected[i], 1e-12));
      CHECK((adjusted[i] <= c.at("alpha").get<double>()) == reject[i]);  // how compare rejects (history/compare.cpp)
    }
  }
  for (const auto& c : r.at("student_t")) {
    CAPTURE(c.dump());
    // SciPy's t.ppf is itself good to about 2e-9 (its cdf at its own ppf misses p by 1e-11), while
    // its t.cdf is good to double precision: the quantile is checked at 1e-8, the cdf at 1e-10.
    if (c.contains("quantile")) CHECK(agrees(student_t_quantile(c.at("p"), c.at("df")), c.at("quantile"), 1e-8));
    else CHECK(agrees(student_t_cdf(c.at("x"), c.at("df")), c.at("cdf"), 1e-10));
  }
  for (const auto& c : r.at("normal")) CHECK(agrees(normal_quantile(c.at("p")), c.at("quantile"), 1e-9));
}
