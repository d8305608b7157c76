// Shard assignment (series/shard.hpp): every experiment in exactly one shard, shards balanced,
// the same assignment for the same series, and a fingerprint that tells series apart.
#include <doctest/doctest.h>

#include <stdexcept>

#include "series/shard.hpp"

namespace {

expr::series::Plan plan_of(std::size_t experiments) {
  expr::series::Plan plan;
  for (std::size_t i = 0; i < experiments; ++i) {
    expr::series::ExperimentPlan e;
    e.name = "sdpa[seq=" + std::to_string(i) + "]";
    e.family = "sdpa";
    plan.experiments.push_back(std::move(e));
  }
  return plan;
}

}  // namespace

TEST_CASE("--shard K/N counts K from 0 and refuses anything else with the reason") {
  const auto s = expr::series::parse_shard("2/3");
  CHECK(s.index == 2);
  CHECK(s.count == 3);
  CHECK(s.str() == "2/3");
  CHECK_THROWS_WITH_AS(expr::series::parse_shard("3/3"), "--shard 3/3: K counts from 0 and must be less than N", std::invalid_argument);
  CHECK_THROWS_WITH_AS(expr::series::parse_shard("0/0"), "--shard 0/0: K counts from 0 and must be less than N", std::invalid_argument);
  for (const auto* bad : {"1", "a/3", "1/3x", "-1/3", "/3", "1/"})
    CHECK_THROWS_WITH_AS(expr::series::parse_shard(bad), (std::string("--shard ") + bad + ": expected K/N, two whole numbers, as in 0/4").c_str(),
                         std::invalid_argument);
}

TEST_CASE("each experiment lands in one shard, shards differ by at most one, and the assignment is stable") {
  const auto plan = plan_of(10);
  const auto shards = expr::series::assign_shards(plan, 4);
  REQUIRE(shards.size() == 10);
  std::vector<std::size_t> sizes(4);
  for (const auto s : shards) {
    REQUIRE(s < 4);
    ++sizes[s];
  }
  CHECK(sizes == std::vector<std::size_t>{3, 3, 2, 2});
  CHECK(expr::series::assign_shards(plan, 4) == shards);
  CHECK(expr::series::assign_shards(plan_of(3), 5) == std::vector<std::size_t>{0, 1, 2});  // more shards than experiments: some empty
}

TEST_CASE("the fingerprint changes with the series text, the --axis options and the plan, and only with them") {
  const auto plan = plan_of(3);
  const auto base = expr::series::fingerprint(plan, "series: a\n", {});
  CHECK(base.size() == 16);
  CHECK(expr::series::fingerprint(plan, "series: a\n", {}) == base);
  CHECK(expr::series::fingerprint(plan, "series: b\n", {}) != base);
  CHECK(expr::series::fingerprint(plan, "series: a\n", {"seq=1,2"}) != base);
  CHECK(expr::series::fingerprint(plan_of(4), "series: a\n", {}) != base);
  // The parts are separated: moving text from one part to the next is another series.
  CHECK(expr::series::fingerprint(plan, "series: a\n", {"x", "y"}) != expr::series::fingerprint(plan, "series: a\n", {"xy"}));
}
