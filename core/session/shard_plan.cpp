// A run's series, and the part of it one shard runs.
#include "session/shard_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "session/status.hpp"

namespace expr::session {

namespace fs = std::filesystem;

ExpectedCosts expected_costs(const history::WallTimes& known, const std::vector<std::string>& identities) {
  ExpectedCosts out{std::vector<double>(identities.size(), 1.0), ""};
  if (known.seconds.empty()) return out;
  std::vector<double> values;
  for (const auto& [identity, seconds] : known.seconds) values.push_back(seconds);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  const double median = values[values.size() / 2];
  for (std::size_t i = 0; i < identities.size(); ++i) {
    const auto it = known.seconds.find(identities[i]);
    out.seconds[i] = it == known.seconds.end() ? median : it->second;
  }
  out.run = known.run;
  return out;
}

ExpectedCosts expected_costs(history::Store* store, const series::Plan& plan, history::WallTimes::From from) {
  std::vector<std::string> identities;
  for (const auto& e : plan.experiments) identities.push_back(e.name);
  if (!store || identities.empty()) return expected_costs(history::WallTimes{}, identities);
  return expected_costs(store->wall_times(plan.name, identities, from), identities);
}

std::vector<std::size_t> recorded_assignment(const report::ShardRecord& resumed, const series::Plan& plan) {
  std::map<std::string, std::size_t> recorded;
  for (const auto& p : resumed.plan) recorded[p.planned.name] = p.shard;
  std::vector<std::size_t> assignment;
  for (const auto& e : plan.experiments) {
    const auto it = recorded.find(e.name);
    if (it == recorded.end())
      throw Stop(Status::bad_input, fmt::format("cannot resume shard {}: the series now has {}, which the shard's plan lacks; start a new "
                                                "run of every shard",
                                                resumed.str(), e.name));
    assignment.push_back(it->second);
  }
  return assignment;
}

void keep_shard(LoadedSeries& loaded, const series::Shard& shard, const std::vector<std::size_t>& assignment, std::string fingerprint,
                std::string costs_from) {
  auto& plan = loaded.plan;
  report::ShardRecord record{shard.index, shard.count, std::move(fingerprint), std::move(costs_from), {}};
  std::vector<series::ExperimentPlan> kept;
  std::vector<std::vector<expect::CompiledGuess>> kept_guesses;
  for (std::size_t i = 0; i < plan.experiments.size(); ++i) {
    auto& e = plan.experiments[i];
    record.plan.push_back({{e.name, e.family, e.point}, assignment.at(i)});
    if (assignment[i] != shard.index) continue;
    kept.push_back(std::move(e));
    kept_guesses.push_back(std::move(loaded.guesses.at(i)));
  }
  plan.experiments = std::move(kept);
  loaded.guesses = std::move(kept_guesses);
  loaded.shard = std::move(record);
}

LoadedSeries load_request(const fs::path& file, const report::RunRequest& request, history::Store* store, const report::ShardRecord* resumed) {
  auto loaded = load_series(file, request.axes);
  if (request.rounds)
    for (auto& e : loaded.plan.experiments) e.iterations.rounds = *request.rounds;
  if (!request.shard) return loaded;
  const auto shard = or_stop(Status::bad_input, [&] { return series::parse_shard(*request.shard); });
  std::vector<std::size_t> assignment;
  std::string costs_from;
  if (resumed) {
    assignment = recorded_assignment(*resumed, loaded.plan);
    costs_from = resumed->costs_from;
  } else {
    const auto costs = expected_costs(store, loaded.plan, history::WallTimes::From::one_whole_run);
    assignment = series::assign_shards(loaded.plan, costs.seconds, shard.count);
    costs_from = costs.run;
  }
  auto fingerprint = series::fingerprint(loaded.plan, file_text(file), request.axes);
  keep_shard(loaded, shard, assignment, std::move(fingerprint), std::move(costs_from));
  return loaded;
}

}  // namespace expr::session
