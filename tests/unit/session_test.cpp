// What the commands do, tested without the command line (session/): which shard runs which point
// and by what costs, what a merge of shards covers and which differences between them refuse it,
// the gate's failures and the status a gated run ends with, and what a resumed run keeps and runs.
#include <doctest/doctest.h>

#include <filesystem>

#include "series/shard.hpp"
#include "session/gate.hpp"
#include "session/merge.hpp"
#include "session/prepared_run.hpp"
#include "session/shard_plan.hpp"
#include "session/status.hpp"

namespace {

namespace session = expr::session;
using session::Status;

session::LoadedSeries series_of(const std::vector<std::string>& names) {
  session::LoadedSeries loaded;
  loaded.plan.name = "sweep";
  for (const auto& name : names) {
    expr::series::ExperimentPlan e;
    e.name = name;
    e.family = "sdpa";
    loaded.plan.experiments.push_back(std::move(e));
  }
  loaded.guesses.resize(names.size());
  return loaded;
}

std::vector<std::string> names_of(const expr::series::Plan& plan) {
  std::vector<std::string> out;
  for (const auto& e : plan.experiments) out.push_back(e.name);
  return out;
}

expr::report::ExperimentResult experiment(const std::string& name, expr::outcome::Status status) {
  expr::report::ExperimentResult e;
  e.measurement.experiment = name;
  e.measurement.status = status;
  e.family = "sdpa";
  return e;
}

// Shard `index` of `count` of a series whose points are {name: shard}, holding `experiments`.
session::Shard shard(std::size_t index, std::size_t count, const std::vector<std::pair<std::string, std::size_t>>& plan,
                     std::vector<expr::report::ExperimentResult> experiments, const std::string& fingerprint = "f1") {
  session::Shard s{std::filesystem::temp_directory_path() / ("expr-session-test-shard-" + std::to_string(index)), {}};
  s.run.series = "sweep";
  expr::report::ShardRecord record{index, count, fingerprint, "", {}};
  for (const auto& [name, where] : plan) record.plan.push_back({{name, "sdpa", {}}, where});
  s.run.shard = record;
  s.run.experiments = std::move(experiments);
  return s;
}

}  // namespace

TEST_CASE("a point's expected cost is its wall time in the history, the median of those known when it has none, 1 when none is known") {
  expr::history::WallTimes known{"run-7", {{"a", 10.0}, {"b", 2.0}, {"c", 4.0}}};
  const auto costs = session::expected_costs(known, {"a", "b", "c", "new"});
  CHECK(costs.seconds == std::vector<double>{10.0, 2.0, 4.0, 4.0});
  CHECK(costs.run == "run-7");
  const auto none = session::expected_costs(expr::history::WallTimes{}, {"a", "b"});
  CHECK(none.seconds == std::vector<double>{1.0, 1.0});
  CHECK(none.run.empty());
}

TEST_CASE("a shard keeps the points assigned to it by cost, and records the whole series with each point's shard") {
  auto loaded = series_of({"p0", "p1", "p2", "p3"});
  const auto costs = session::expected_costs(expr::history::WallTimes{"run-7", {{"p0", 1}, {"p1", 9}, {"p2", 1}, {"p3", 1}}},
                                             names_of(loaded.plan));
  // The costly point alone in one shard, the three cheap ones in the other.
  const auto assignment = expr::series::assign_shards(loaded.plan, costs.seconds, 2);
  CHECK(assignment == std::vector<std::size_t>{1, 0, 1, 1});
  session::keep_shard(loaded, {1, 2}, assignment, "f1", costs.run);
  CHECK(names_of(loaded.plan) == std::vector<std::string>{"p0", "p2", "p3"});
  CHECK(loaded.guesses.size() == 3);
  REQUIRE(loaded.shard);
  CHECK(loaded.shard->str() == "1/2");
  CHECK(loaded.shard->series_fingerprint == "f1");
  CHECK(loaded.shard->costs_from == "run-7");
  REQUIRE(loaded.shard->plan.size() == 4);
  CHECK(loaded.shard->plan[1].planned.name == "p1");
  CHECK(loaded.shard->plan[1].shard == 0);
}

TEST_CASE("a resumed shard keeps its recorded assignment, and refuses a point its plan lacks") {
  expr::report::ShardRecord resumed{1, 2, "f1", "", {{{"a", "sdpa", {}}, 1}, {{"b", "sdpa", {}}, 0}}};
  CHECK(session::recorded_assignment(resumed, series_of({"b", "a"}).plan) == std::vector<std::size_t>{0, 1});
  try {
    session::recorded_assignment(resumed, series_of({"a", "b", "c"}).plan);
    FAIL("a point the shard's plan lacks was accepted");
  } catch (const session::Stop& stop) {
    CHECK(stop.status() == Status::bad_input);
    CHECK(std::string(stop.what()) ==
          "cannot resume shard 1/2: the series now has c, which the shard's plan lacks; start a new run of every shard");
  }
}

TEST_CASE("a merge names each missing point with its shard and why, and keeps the first of two results") {
  using expr::outcome::Status;
  const std::vector<std::pair<std::string, std::size_t>> plan{{"a", 0}, {"b", 0}, {"c", 1}, {"d", 2}};
  std::vector<session::Shard> shards{shard(0, 3, plan, {experiment("a", Status::ok), experiment("b", Status::interrupted)}),
                                     shard(1, 3, plan, {experiment("c", Status::failed), experiment("a", Status::ok)})};
  const auto c = session::cover(shards);
  CHECK(c.planned.size() == 4);
  CHECK(c.missing == std::vector<std::string>{"b (shard 0/3, which did not run it: interrupted)", "d (shard 2/3, whose directory was not given)"});
  CHECK(c.twice == std::vector<std::string>{"a"});
  CHECK(c.recorded.experiments.size() == 3);  // a once, b, c: a failure is a result
  REQUIRE(c.merged.size() == 3);
  CHECK(c.merged[0].missing == 1);
  CHECK(c.merged[1].missing == 0);
  CHECK(c.merged[2].dir.empty());
  CHECK(c.merged[2].missing == 1);
}

TEST_CASE("shards of another series or GPU are a mix, shards on other hosts are not, and a fact a shard lacks is no difference") {
  auto first = shard(0, 2, {{"a", 0}, {"b", 1}}, {});
  auto second = shard(1, 2, {{"a", 0}, {"b", 1}}, {});
  first.run.environment = {{"host", "node1"}, {"gpu", "H200"}, {"driver", "580"}};
  second.run.environment = {{"host", "node2"}, {"gpu", "H200"}};
  std::map<std::string, std::string> environment;
  CHECK(session::mix({first, second}, environment).empty());
  CHECK(environment["host"] == "node1 (shard 0/2) | node2 (shard 1/2)");
  CHECK(environment["driver"] == "580");
  second.run.environment["gpu"] = "A100";
  second.run.shard->series_fingerprint = "f2";
  CHECK(session::mix({first, second}, environment) ==
        std::vector<std::string>{"series (name and fingerprint): sweep f1 (shard 0/2) | sweep f2 (shard 1/2)",
                                 "environment gpu: H200 (shard 0/2) | A100 (shard 1/2)"});
}

TEST_CASE("the gate fails a run on each slower figure, structural regression, failed or missing experiment") {
  expr::history::Comparison comparison;
  comparison.timings.resize(2);
  auto& slower = comparison.timings[0];
  slower.experiment = "naive";
  slower.metric = "gpu_time";
  slower.base_median = 1e-3;
  slower.candidate_median = 1.2e-3;
  slower.change = 0.2;
  slower.threshold = 0.05;
  slower.verdict = expr::history::Change::slower;
  comparison.timings[1].experiment = "flash";
  comparison.timings[1].metric = "gpu_time";
  comparison.timings[1].verdict = expr::history::Change::faster;
  comparison.structure.push_back({"naive", "kernels", "3", "4", "(+1)", true});
  comparison.failed = {"math: crashed"};
  comparison.missing = {"cudnn"};
  auto failures = session::gate_failures(comparison, "series3");
  std::vector<std::string> names;
  for (const auto& f : failures) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"naive gpu_time", "naive kernels", "math: crashed", "cudnn"});
  CHECK(failures[0].suite == "series3.gate");
  CHECK(failures[0].message == "slower than the baseline");
  comparison.structure_gated = false;  // --structure off: a structural change fails nothing
  CHECK(session::gate_failures(comparison, "series3").size() == 3);
}

TEST_CASE("a gated run ends with a failed experiment over a regression, and a regression over a failed guess") {
  CHECK(session::gated(Status::experiment_failed, Status::regression) == Status::experiment_failed);
  CHECK(session::gated(Status::required_guess_failed, Status::regression) == Status::regression);
  CHECK(session::gated(Status::required_guess_failed, Status::ok) == Status::required_guess_failed);
  CHECK(session::gated(Status::ok, Status::bad_input) == Status::bad_input);  // the baseline could not be compared
  CHECK(session::status_of({.required_failed = 1, .experiments_interrupted = 1}) == Status::experiment_failed);
  CHECK(session::status_of({.required_failed = 1}) == Status::required_guess_failed);
  CHECK(session::status_of({.confirmed = 3, .contradicted = 2}) == Status::ok);
}

TEST_CASE("a resumed run keeps its identity and its points with a result, and runs the others") {
  using expr::outcome::Status;
  expr::report::RunResult earlier;
  earlier.id = "20261201T010000Z-abc";
  earlier.started = "2026-12-01T01:00:00Z";
  earlier.series_file = "experiments/sweep.yaml";
  earlier.environment = {{"gpu", "H200"}};
  earlier.experiments = {experiment("a", Status::ok), experiment("b", Status::interrupted), experiment("d", Status::crashed)};
  const auto p = session::resume_from(earlier, series_of({"a", "b", "c", "d"}), "runs/sweep", "");
  CHECK(p.run.id == earlier.id);
  CHECK(p.run.started == earlier.started);
  CHECK(p.run.series_file == "experiments/sweep.yaml");
  CHECK(p.run.environment == earlier.environment);
  CHECK(p.run.resumed.size() == 1);
  CHECK(p.run.planned == 4);
  std::vector<std::string> restored;
  for (const auto& e : p.restored) restored.push_back(e.measurement.experiment);
  CHECK(restored == std::vector<std::string>{"a", "d"});  // a crash is a result like any other
  CHECK(p.left == std::vector<std::string>{"b", "c"});
  CHECK(session::resume_from(earlier, series_of({"a", "b", "c", "d"}), "runs/sweep", "edited.yaml").run.series_file == "edited.yaml");
}
