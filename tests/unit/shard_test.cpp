// Shard assignment (series/shard.hpp): every experiment in exactly one shard, shards balanced,
// the same assignment for the same series, and a fingerprint that tells series apart.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
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

TEST_CASE("with equal costs each experiment lands in one shard, shards differ by at most one, and the assignment is stable") {
  const auto plan = plan_of(10);
  const std::vector<double> equal(10, 1.0);
  const auto shards = expr::series::assign_shards(plan, equal, 4);
  REQUIRE(shards.size() == 10);
  std::vector<std::size_t> sizes(4);
  for (const auto s : shards) {
    REQUIRE(s < 4);
    ++sizes[s];
  }
  CHECK(sizes == std::vector<std::size_t>{3, 3, 2, 2});
  CHECK(expr::series::assign_shards(plan, equal, 4) == shards);
  // Experiments of equal cost go round the shards in the order of their identities.
  CHECK(expr::series::assign_shards(plan_of(3), std::vector<double>(3, 1.0), 5) == std::vector<std::size_t>{0, 1, 2});  // some empty
  CHECK(expr::series::assign_shards(plan_of(3), std::vector<double>(3, 0.0), 2) == std::vector<std::size_t>{0, 1, 0});
}

TEST_CASE("shards are balanced by cost, the costliest first, and an experiment keeps its shard whatever the plan's order") {
  auto plan = plan_of(6);
  const std::vector<double> costs{2, 10, 4, 6, 3, 5};
  // Longest first into the least loaded: 10 -> 0; 6 -> 1; 5 -> 1 (11); 4 -> 0 (14); 3 -> 1 (14);
  // 2 -> 0, the first of two equal loads with fewer experiments: 16 and 14.
  const auto shards = expr::series::assign_shards(plan, costs, 2);
  CHECK(shards == std::vector<std::size_t>{0, 0, 0, 1, 1, 1});

  // The same identities and costs in another order: each experiment in the same shard.
  std::vector<std::size_t> order{3, 0, 5, 1, 4, 2};
  expr::series::Plan shuffled;
  std::vector<double> shuffled_costs;
  for (const auto i : order) {
    shuffled.experiments.push_back(plan.experiments[i]);
    shuffled_costs.push_back(costs[i]);
  }
  const auto again = expr::series::assign_shards(shuffled, shuffled_costs, 2);
  for (std::size_t k = 0; k < order.size(); ++k) CHECK_MESSAGE(again[k] == shards[order[k]], shuffled.experiments[k].name);

  CHECK_THROWS_WITH_AS(expr::series::assign_shards(plan, {1, 2}, 2), "2 costs for 6 experiments", std::invalid_argument);
  CHECK_THROWS_AS(expr::series::assign_shards(plan, {1, 2, 3, 4, 5, -1}, 2), std::invalid_argument);
}

TEST_CASE("over many random plans every experiment lands in exactly one shard and no shard exceeds the mean load by more than one experiment") {
  std::mt19937 random(12);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t experiments = 1 + random() % 60, count = 1 + random() % 9;
    const auto plan = plan_of(experiments);
    std::vector<double> costs;
    for (std::size_t i = 0; i < experiments; ++i) costs.push_back(static_cast<double>(random() % 1000) / 10.0);
    const auto shards = expr::series::assign_shards(plan, costs, count);
    REQUIRE(shards.size() == experiments);  // one shard per experiment: exactly once
    std::vector<double> load(count);
    for (std::size_t i = 0; i < experiments; ++i) {
      REQUIRE(shards[i] < count);
      load[shards[i]] += costs[i];
    }
    // Greedy list scheduling's bound: the last experiment placed on the fullest shard went to the
    // least loaded one, whose load was at most the mean.
    const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
    const double largest = *std::max_element(costs.begin(), costs.end());
    CHECK(*std::max_element(load.begin(), load.end()) <= total / static_cast<double>(count) + largest + 1e-9);
    CHECK(expr::series::assign_shards(plan, costs, count) == shards);
  }
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
