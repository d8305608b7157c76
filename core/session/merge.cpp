// Joining the run directories of a series' shards into one.
#include "session/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "report/resume.hpp"
#include "report/run_directory.hpp"
#include "series/shard.hpp"
#include "session/places.hpp"

namespace expr::session {

namespace fs = std::filesystem;

namespace {

// Environment facts that may differ between the shards of one series: a cluster's nodes have
// their own names, and cards of one model their own UUIDs and indices. Any other difference (GPU
// model, driver, CUDA, library versions) is a mix.
bool may_differ(const std::string& fact) { return fact == "host" || fact == "gpu_uuid" || fact == "gpu_index"; }

// A value of each shard's run, described over all shards: the value when all that have it agree,
// else each value with its shards. `differs` says which.
std::string describe(const std::vector<Shard>& shards, const std::function<std::optional<std::string>(const report::RunResult&)>& value,
                     bool& differs) {
  std::vector<std::pair<std::string, std::vector<std::string>>> values;  // value, its shards
  for (const auto& s : shards) {
    const auto known = value(s.run);
    if (!known) continue;
    auto it = std::find_if(values.begin(), values.end(), [&](const auto& x) { return x.first == *known; });
    if (it == values.end()) it = values.emplace(values.end(), *known, std::vector<std::string>{});
    it->second.push_back(s.run.shard->str());
  }
  differs = values.size() > 1;
  if (!differs) return values.front().first;
  std::string text;
  for (const auto& [v, where] : values)
    text += fmt::format("{}{} (shard{} {})", text.empty() ? "" : " | ", v, where.size() > 1 ? "s" : "", fmt::join(where, ", "));
  return text;
}

}  // namespace

std::vector<std::string> mix(const std::vector<Shard>& shards, std::map<std::string, std::string>& environment) {
  std::vector<std::string> out;
  bool differs = false;
  const auto series = describe(shards, [](const auto& r) { return std::optional(fmt::format("{} {}", r.series, r.shard->series_fingerprint)); }, differs);
  if (differs) out.push_back(fmt::format("series (name and fingerprint): {}", series));
  const auto count = describe(shards, [](const auto& r) { return std::optional(fmt::format("{}", r.shard->count)); }, differs);
  if (differs) out.push_back(fmt::format("shard count: {}", count));
  // Shards balanced by other costs may have run a point twice or not at all.
  const auto costs = describe(
      shards,
      [](const auto& r) { return std::optional(r.shard->costs_from.empty() ? std::string("equal costs") : "the wall times of run " + r.shard->costs_from); },
      differs);
  if (differs) out.push_back(fmt::format("shards balanced by: {}", costs));
  std::set<std::string> facts;
  for (const auto& s : shards)
    for (const auto& [k, v] : s.run.environment) facts.insert(k);
  for (const auto& fact : facts) {
    const auto value = describe(
        shards, [&](const auto& r) { return r.environment.count(fact) ? std::optional(r.environment.at(fact)) : std::nullopt; }, differs);
    environment[fact] = value;
    if (differs && !may_differ(fact)) out.push_back(fmt::format("environment {}: {}", fact, value));
  }
  return out;
}

namespace {

// Each shard of the series with its directory, when given, and none missing yet.
std::vector<report::MergedShard> shards_of_series(const std::vector<Shard>& shards) {
  std::vector<report::MergedShard> merged;
  const auto count = shards.front().run.shard->count;
  for (std::size_t k = 0; k < count; ++k) {
    const auto shard = series::Shard{k, count}.str();
    const auto given = std::find_if(shards.begin(), shards.end(), [&](const auto& s) { return s.run.shard->str() == shard; });
    merged.push_back({shard, given == shards.end() ? "" : fs::weakly_canonical(given->dir).string(), 0});
  }
  return merged;
}

// Counts the planned points without a result against their shard, and says why each is missing.
void count_missing(Coverage& c, const std::map<std::string, std::string>& shard_of, const std::map<std::string, std::size_t>& at) {
  for (const auto& p : c.planned) {
    const auto it = at.find(p.name);
    if (it != at.end() && report::has_result(c.recorded.experiments[it->second].measurement)) continue;
    const auto& where = shard_of.at(p.name);
    auto m = std::find_if(c.merged.begin(), c.merged.end(), [&](const auto& x) { return x.shard == where; });
    if (m == c.merged.end()) m = c.merged.insert(c.merged.end(), {where, "", 0});  // a shard of a mixed count
    ++m->missing;
    std::string why = m->dir.empty() ? "whose directory was not given" : "which did not finish it";
    if (it != at.end()) {
      const auto& held = c.recorded.experiments[it->second].measurement;
      why = fmt::format("which did not run it: {}{}{}", outcome::to_string(held.status), held.reason.empty() ? "" : ", ", held.reason);
    }
    c.missing.push_back(fmt::format("{} (shard {}, {})", p.name, where, why));
  }
}

}  // namespace

Coverage cover(std::vector<Shard>& shards) {
  // A point a shard holds without a result (skipped: filtered out, no device; interrupted) is
  // missing: the shard has yet to run it.
  Coverage c;
  std::map<std::string, std::string> shard_of;
  std::map<std::string, std::size_t> at;  // where each experiment is in recorded.experiments
  for (auto& s : shards) {
    // Each shard records the series' sweep guesses (not evaluable there); judged again over all.
    for (auto& g : s.run.sweep_guesses) c.recorded.sweep_guesses.push_back(std::move(g));
    for (const auto& p : s.run.shard->plan)
      if (shard_of.emplace(p.planned.name, series::Shard{p.shard, s.run.shard->count}.str()).second) c.planned.push_back(p.planned);
    for (auto& e : s.run.experiments) {
      const auto name = e.measurement.experiment;
      const auto it = at.find(name);
      if (it == at.end()) {
        at[name] = c.recorded.experiments.size();
        c.recorded.experiments.push_back(std::move(e));
        continue;
      }
      auto& kept = c.recorded.experiments[it->second];
      if (report::has_result(e.measurement) && report::has_result(kept.measurement)) c.twice.push_back(name);
      else if (report::has_result(e.measurement)) kept = std::move(e);
    }
  }
  c.merged = shards_of_series(shards);
  count_missing(c, shard_of, at);
  return c;
}

namespace {

// The shards' run directories, read; stops when one is --out, no shard, or given twice.
std::vector<Shard> read_shards(const MergeArgs& args) {
  std::vector<Shard> shards;
  for (const auto& dir : args.shard_dirs) {
    // Its traces are read while the merge writes: --out must not clear them first.
    refuse_out_is_input(args.out, dir, "a shard given to merge");
    shards.push_back({dir, or_stop(Status::bad_input, [&] { return report::RunDirectory(dir).read(); })});
    if (!shards.back().run.shard)
      throw Stop(Status::bad_input, fmt::format("{}: not a shard's run directory (its results.json has no \"shard\"); `expr run FILE --shard "
                                                "K/N` makes one",
                                                dir.string()));
  }
  for (std::size_t i = 0; i < shards.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (shards[i].run.shard->str() == shards[k].run.shard->str() &&
          shards[i].run.shard->series_fingerprint == shards[k].run.shard->series_fingerprint)
        throw Stop(Status::bad_input, fmt::format("shard {} is given twice: {} and {}", shards[i].run.shard->str(), shards[k].dir.string(),
                                                  shards[i].dir.string()));
  return shards;
}

// The merged run's identity: the first shard's series, from the earliest start to the latest end
// (none while a shard has not ended).
void name_merged_run(report::RunResult& run, const std::vector<Shard>& shards) {
  const auto& first = shards.front().run;
  run.id = report::new_run_id();
  run.revision = report::expr_revision();
  run.series = first.series;
  run.series_file = first.series_file;
  run.description = first.description;
  run.started = first.started;
  run.finished = first.finished;
  for (const auto& s : shards) {
    run.started = std::min(run.started, s.run.started);
    if (s.run.finished.empty() || (!run.finished.empty() && s.run.finished > run.finished)) run.finished = s.run.finished;
  }
}

}  // namespace

Merged merge(const MergeArgs& args) {
  auto shards = read_shards(args);
  Merged m;
  m.shards = shards.size();
  auto& run = m.judged.run;
  const auto differences = mix(shards, run.environment);
  if (!differences.empty() && !args.allow_mixed) {
    std::vector<Stop::Line> lines;
    for (const auto& d : differences) lines.push_back({true, "the shards differ in " + d});
    lines.push_back({false, "refusing to merge shards of different series or environments; --allow-mixed merges them and shows the mix"});
    throw Stop(Status::bad_input, std::move(lines));
  }
  for (const auto& d : differences) note("mixed: {}", d);
  auto c = cover(shards);
  for (const auto& name : c.twice) note("mixed: {} has a result in more than one shard; the first directory's is kept", name);
  c.recorded.run_dir = shards.front().dir;
  auto guesses = or_stop(Status::bad_input, [&] { return recorded_guesses(c.recorded, c.planned, std::nullopt); });
  name_merged_run(run, shards);
  run.planned = c.planned.size();
  run.merged = std::move(c.merged);
  run.run_dir = args.out;
  m.judged.status = judge_again(run, std::move(c.recorded), std::move(guesses), std::move(c.planned), args.out, args.force,
                                fmt::format("merging {} shard{} into {}", shards.size(), shards.size() == 1 ? "" : "s", args.out.string()));
  if (const auto series = report::RunDirectory(shards.front().dir).series_copy(); fs::exists(series)) {
    std::error_code ignored;  // the series text is a convenience for `expr replay --series`
    fs::copy_file(series, report::RunDirectory(args.out).series_copy(), fs::copy_options::overwrite_existing, ignored);
  }
  m.missing = std::move(c.missing);
  if (!m.missing.empty()) m.judged.status = Status::incomplete;
  return m;
}

}  // namespace expr::session
