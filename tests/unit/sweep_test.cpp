// Sweep expansion's pieces (series/sweep.hpp) on their own and composed: the order points come in,
// zip groups moving together, exclusions, --axis replacing an axis, and refusals with their reasons.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "series/sweep.hpp"

namespace series = expr::series;

namespace {

const expr::Description plugin{"sdpa",
                               "attention",
                               {{"seq", expr::ParamType::integer, std::int64_t{1024}, "", {}},
                                {"batch", expr::ParamType::integer, std::int64_t{1}, "", {}},
                                {"dtype", expr::ParamType::string, std::string("fp16"), "", {"fp16", "bf16", "fp32"}}},
                               {expr::Device::cuda}};

series::Located<std::string> at(std::string text, int line) { return {std::move(text), {"sweep.yaml", line, 1}}; }

series::AxisSpec axis(const std::string& name, const std::vector<std::string>& values, int line) {
  series::AxisSpec a{at(name, line), {}, false};
  for (const auto& v : values) a.values.push_back(at(v, line));
  return a;
}

// Each position's value indices, until the odometer has turned past its last.
std::vector<std::vector<std::size_t>> positions_of(series::Odometer odometer) {
  std::vector<std::vector<std::size_t>> out;
  for (; !odometer.at_end(); odometer.turn()) out.push_back(odometer.value_indices());
  return out;
}

std::vector<std::string> messages(const std::vector<expr::util::Problem>& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.message);
  return out;
}

std::vector<std::string> identities(const std::vector<series::AxisPoint>& points) {
  std::vector<std::string> out;
  for (const auto& p : points) out.push_back(series::identity("sdpa", p));
  return out;
}

}  // namespace

TEST_CASE("the odometer turns its last space fastest, and the axes of one space move together") {
  // Axes 0, 1 and 2; axes 1 and 2 zipped into one space of 2 steps.
  const series::Odometer odometer({{{0}, 3}, {{1, 2}, 2}}, 3);
  CHECK(odometer.positions(100) == 6);
  CHECK(positions_of(odometer) == std::vector<std::vector<std::size_t>>{{0, 0, 0}, {0, 1, 1}, {1, 0, 0}, {1, 1, 1}, {2, 0, 0}, {2, 1, 1}});
}

TEST_CASE("the odometer counts its positions before turning, past any limit without overflowing, and has none with an empty space") {
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
  const series::Odometer big({{{0}, huge}, {{1}, huge}, {{2}, 3}}, 3);
  CHECK(big.positions(1'000'000) == 1'000'001);
  CHECK(series::Odometer({{{0}, 1000}, {{1}, 1000}}, 2).positions(1'000'000) == 1'000'000);
  const series::Odometer empty({{{0}, 2}, {{1}, 0}}, 2);
  CHECK(empty.at_end());
  CHECK(empty.positions(10) == 0);
  // No axes: one position, the empty point.
  CHECK(positions_of(series::Odometer({}, 0)) == std::vector<std::vector<std::size_t>>{{}});
}

TEST_CASE("zip groups become one space each, ordered by their first axis, and the other axes are spaces of their own") {
  std::vector<expr::util::Problem> problems;
  const std::vector<series::AxisSpec> axes{axis("dtype", {"fp16", "bf16"}, 1), axis("seq", {"1", "2", "3"}, 2), axis("batch", {"8", "4", "2"}, 3)};
  const auto spaces = series::axis_spaces(axes, {{at("batch", 4), at("seq", 4)}}, "sdpa", problems);
  CHECK(problems.empty());
  REQUIRE(spaces.size() == 2);
  CHECK(spaces[0].axes == std::vector<std::size_t>{0});
  CHECK(spaces[0].steps == 2);
  CHECK(spaces[1].axes == std::vector<std::size_t>{1, 2});
  CHECK(spaces[1].steps == 3);
}

TEST_CASE("a zip group naming an unknown axis, an axis zipped twice and unequal lengths are problems at their places") {
  std::vector<expr::util::Problem> problems;
  const std::vector<series::AxisSpec> axes{axis("dtype", {"fp16", "bf16"}, 1), axis("seq", {"1", "2", "3"}, 2), axis("batch", {"8", "4", "2"}, 3)};
  series::axis_spaces(axes, {{at("seq", 5), at("dtype", 5)}, {at("seq", 6), at("batc", 6)}}, "sdpa", problems);
  CHECK(messages(problems) == std::vector<std::string>{
                                  "zip: axes 'dtype' (2 values) and 'seq' (3 values) must have as many values to move together",
                                  "axis 'seq' is in two zip groups",
                                  "zip names 'batc', which is not an axis of sdpa; did you mean 'batch'? (axes: dtype, seq, batch)",
                              });
  CHECK(problems[0].pos.line == 5);
  CHECK(problems[2].pos.line == 6);
}

TEST_CASE("a condition is an equality, or a comparison only on a numeric parameter") {
  const auto& seq = plugin.params[0];
  const auto& dtype = plugin.params[2];
  CHECK(series::condition(seq, " >4096 ").matches(std::int64_t{8192}));
  CHECK_FALSE(series::condition(seq, ">4096").matches(std::int64_t{4096}));
  CHECK(series::condition(seq, "<= 4096").matches(std::int64_t{4096}));
  CHECK(series::condition(seq, "!=1").matches(std::int64_t{2}));
  CHECK(series::condition(dtype, "fp32").matches(std::string("fp32")));
  CHECK_FALSE(series::condition(dtype, "fp32").matches(std::string("fp16")));
  CHECK_THROWS_WITH_AS(series::condition(dtype, ">fp16"), "'>fp16' compares, but parameter 'dtype' is not a number", std::invalid_argument);
  CHECK_THROWS_AS(series::condition(seq, ">big"), std::invalid_argument);
}

TEST_CASE("an exclusion rule leaves a point out when every axis it names matches one of its conditions") {
  const series::AxisPoint small_fp32{{"seq", std::int64_t{1024}}, {"dtype", std::string("fp32")}};
  const series::AxisPoint big_fp32{{"seq", std::int64_t{8192}}, {"dtype", std::string("fp32")}};
  const series::AxisPoint big_fp16{{"seq", std::int64_t{8192}}, {"dtype", std::string("fp16")}};
  const series::ExclusionRule big_and_fp32_or_bf16{
      {{0, {{">", std::int64_t{4096}}}}, {1, {{"", std::string("fp32")}, {"", std::string("bf16")}}}}};
  CHECK(big_and_fp32_or_bf16.excludes(big_fp32));
  CHECK_FALSE(big_and_fp32_or_bf16.excludes(small_fp32));
  CHECK_FALSE(big_and_fp32_or_bf16.excludes(big_fp16));
  CHECK_FALSE(series::ExclusionRule{}.excludes(big_fp32));
}

TEST_CASE("exclusions are typed like their axes, and one that names no value of its axis is a problem unless --axis set the axis") {
  std::vector<expr::util::Problem> problems;
  const auto typed = series::typed_axes({axis("seq", {"1024", "8192"}, 1), axis("dtype", {"fp16", "fp32"}, 2)}, plugin, problems);
  REQUIRE(problems.empty());
  series::Exclusion written;
  written.conditions.push_back({at("dtype", 3), {at("bf16", 3)}});
  written.conditions.push_back({at("seq", 3), {at(">4096", 3)}});
  const auto rules = series::exclusion_rules({written}, typed, {}, "sdpa", problems);
  CHECK(messages(problems) == std::vector<std::string>{"exclude: bf16 is not a value of axis 'dtype', so this leaves nothing out"});
  REQUIRE(rules.size() == 1);
  CHECK(rules[0].all_of.size() == 2);
  problems.clear();
  series::exclusion_rules({written}, typed, {"dtype"}, "sdpa", problems);
  CHECK(problems.empty());
}

TEST_CASE("--axis replaces the file's axis in place or adds one, and an axis the plugin lacks is a problem unless it came from the defaults") {
  series::ExperimentSpec x;
  x.name = at("sdpa", 1);
  x.axes = {axis("seq", {"1024"}, 2), axis("dtype", {"fp16"}, 3), axis("heads", {"8"}, 4), axis("window", {"1"}, 5)};
  x.axes[3].from_defaults = true;
  const std::vector<series::AxisOverride> overrides{{"--axis seq=1,2", "seq", {"1", "2"}}, {"--axis batch=4", "batch", {"4"}},
                                                     {"--axis heads=2", "heads", {"2"}}};
  std::vector<expr::util::Problem> problems;
  const auto applicable = series::applicable_axes(x, plugin, overrides, problems);
  CHECK(messages(problems) ==
        std::vector<std::string>{"plugin sdpa has no parameter 'heads' (parameters: seq, batch, dtype)"});
  REQUIRE(applicable.axes.size() == 3);
  CHECK(applicable.axes[0].name.value == "seq");
  CHECK(applicable.axes[0].values.size() == 2);
  CHECK(applicable.axes[0].name.pos.file == "--axis seq=1,2");
  CHECK(applicable.axes[1].name.value == "dtype");
  CHECK(applicable.axes[2].name.value == "batch");
  CHECK(applicable.overridden == std::set<std::string>{"seq", "batch"});
}

TEST_CASE("expand composes the pieces: the product in axis order, zip groups together, excluded points left out") {
  series::ExperimentSpec x;
  x.name = at("sdpa", 1);
  x.axes = {axis("dtype", {"fp16", "fp32"}, 2), axis("seq", {"1024", "8192"}, 3), axis("batch", {"8", "2"}, 4)};
  x.zip = {{at("seq", 5), at("batch", 5)}};
  series::Exclusion big_fp32;
  big_fp32.conditions = {{at("seq", 6), {at(">4096", 6)}}, {at("dtype", 6), {at("fp32", 6)}}};
  x.exclude = {big_fp32};
  std::vector<expr::util::Problem> problems;
  const auto points = series::expand(x, plugin, {}, 100, problems);
  CHECK(problems.empty());
  CHECK(identities(points) == std::vector<std::string>{"sdpa[dtype=fp16,seq=1024,batch=8]", "sdpa[dtype=fp16,seq=8192,batch=2]",
                                                       "sdpa[dtype=fp32,seq=1024,batch=8]"});
}

TEST_CASE("expand refuses a product over max_points, and a sweep whose every point is excluded") {
  series::ExperimentSpec x;
  x.name = at("sdpa", 1);
  x.axes = {axis("seq", {"1", "2", "3"}, 2), axis("batch", {"1", "2"}, 3)};
  std::vector<expr::util::Problem> problems;
  CHECK(series::expand(x, plugin, {}, 5, problems).empty());
  CHECK(messages(problems) == std::vector<std::string>{"the axes of sdpa combine into more than max_points (5) points before exclusions; "
                                                       "narrow them, or raise 'max_points' at the top of the series file (at most 1000000)"});
  problems.clear();
  CHECK(series::expand(x, plugin, {}, 6, problems).size() == 6);
  series::Exclusion everything;
  everything.conditions = {{at("seq", 4), {at(">0", 4)}}};
  x.exclude = {everything};
  CHECK(series::expand(x, plugin, {}, 6, problems).empty());
  CHECK(messages(problems) == std::vector<std::string>{"the sweep of sdpa expands to zero points: every point is excluded"});
  // No axis that applies: one point, the experiment itself.
  problems.clear();
  x.axes.clear();
  CHECK(series::expand(x, plugin, {}, 6, problems) == std::vector<series::AxisPoint>{{}});
  CHECK(problems.empty());
}
