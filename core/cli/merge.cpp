// `expr merge`: one run directory from the run directories of a series' shards (`expr run --shard
// K/N`). The recorded experiments are judged again together through the path `expr replay` takes,
// so the guesses that span shards get their verdicts; the missing experiments are named with their
// shard; shards of different series or environments are refused unless --allow-mixed.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "cli/commands.hpp"
#include "report/resume.hpp"
#include "report/run_directory.hpp"
#include "series/shard.hpp"
#include "util/log.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

namespace {

// Environment facts that may differ between the shards of one series: a cluster's nodes have
// their own names, and cards of one model their own UUIDs and indices. Any other difference (GPU model, driver,
// CUDA, library versions) is a mix.
bool may_differ(const std::string& fact) { return fact == "host" || fact == "gpu_uuid" || fact == "gpu_index"; }

struct Shard {
  fs::path dir;
  report::RunResult run;
};

// Each difference between the shards, one line each: the series and every environment fact that
// is not the same in all. Fills `environment` with the merged facts, a differing one as "A (shards
// 0/3, 1/3) | B (shard 2/3)".
std::vector<std::string> mix(const std::vector<Shard>& shards, std::map<std::string, std::string>& environment) {
  std::vector<std::string> out;
  // A value absent from a shard (std::nullopt) is no difference: a shard killed before its first
  // experiment lacks the facts that workers report.
  const auto describe = [&](const std::function<std::optional<std::string>(const report::RunResult&)>& value, bool& differs) {
    std::vector<std::pair<std::string, std::vector<std::string>>> values;  // value, its shards
    for (const auto& s : shards) {
      const auto known = value(s.run);
      if (!known) continue;
      const auto& v = *known;
      auto it = std::find_if(values.begin(), values.end(), [&](const auto& x) { return x.first == v; });
      if (it == values.end()) it = values.emplace(values.end(), v, std::vector<std::string>{});
      it->second.push_back(s.run.shard->str());
    }
    differs = values.size() > 1;
    if (!differs) return values.front().first;
    std::string text;
    for (const auto& [v, where] : values)
      text += fmt::format("{}{} (shard{} {})", text.empty() ? "" : " | ", v, where.size() > 1 ? "s" : "",
                          fmt::join(where, ", "));
    return text;
  };
  bool differs = false;
  const auto series = describe([](const auto& r) { return std::optional(fmt::format("{} {}", r.series, r.shard->series_fingerprint)); }, differs);
  if (differs) out.push_back(fmt::format("series (name and fingerprint): {}", series));
  const auto count = describe([](const auto& r) { return std::optional(fmt::format("{}", r.shard->count)); }, differs);
  if (differs) out.push_back(fmt::format("shard count: {}", count));
  // Shards balanced by other costs may have run a point twice or not at all.
  const auto costs = describe(
      [](const auto& r) { return std::optional(r.shard->costs_from.empty() ? std::string("equal costs") : "the wall times of run " + r.shard->costs_from); },
      differs);
  if (differs) out.push_back(fmt::format("shards balanced by: {}", costs));
  std::set<std::string> facts;
  for (const auto& s : shards)
    for (const auto& [k, v] : s.run.environment) facts.insert(k);
  for (const auto& fact : facts) {
    const auto value = describe(
        [&](const auto& r) { return r.environment.count(fact) ? std::optional(r.environment.at(fact)) : std::nullopt; }, differs);
    environment[fact] = value;
    if (differs && !may_differ(fact)) out.push_back(fmt::format("environment {}: {}", fact, value));
  }
  return out;
}

}  // namespace

int merge(const std::vector<fs::path>& shard_dirs, const fs::path& out, bool allow_mixed, bool force) {
  std::vector<Shard> shards;
  for (const auto& dir : shard_dirs) {
    // Its traces are read while the merge writes: --out must not clear them first.
    if (out_is_input(out, dir, "a shard given to merge")) return bad_input;
    try {
      shards.push_back({dir, report::RunDirectory(dir).read()});
    } catch (const std::exception& e) {
      log::error("{}", e.what());
      return bad_input;
    }
    if (!shards.back().run.shard) {
      fmt::print(stderr, "error: {}: not a shard's run directory (its results.json has no \"shard\"); `expr run FILE --shard K/N` makes one\n",
                 dir.string());
      return bad_input;
    }
  }
  for (std::size_t i = 0; i < shards.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (shards[i].run.shard->str() == shards[k].run.shard->str() &&
          shards[i].run.shard->series_fingerprint == shards[k].run.shard->series_fingerprint) {
        log::error("shard {} is given twice: {} and {}", shards[i].run.shard->str(), shards[k].dir.string(), shards[i].dir.string());
        return bad_input;
      }

  report::RunResult run;
  const auto differences = mix(shards, run.environment);
  if (!differences.empty()) {
    for (const auto& d : differences) fmt::print(stderr, "{} {}\n", allow_mixed ? "mixed:" : "error: the shards differ in", d);
    if (!allow_mixed) {
      fmt::print(stderr, "refusing to merge shards of different series or environments; --allow-mixed merges them and shows the mix\n");
      return bad_input;
    }
  }

  // The whole series as planned (every shard records it), and the experiments that have a result.
  // A point a shard holds without one (skipped: filtered out, no device; interrupted) is missing:
  // the shard has yet to run it.
  std::vector<report::PlannedPoint> planned;
  std::map<std::string, std::string> shard_of;
  report::RunResult recorded;
  std::map<std::string, std::size_t> at;  // where each experiment is in recorded.experiments
  for (auto& s : shards) {
    // Each shard records the series' sweep guesses (not evaluable there); judged again over all.
    for (auto& g : s.run.sweep_guesses) recorded.sweep_guesses.push_back(std::move(g));
    for (const auto& p : s.run.shard->plan)
      if (shard_of.emplace(p.planned.name, series::Shard{p.shard, s.run.shard->count}.str()).second) planned.push_back(p.planned);
    for (auto& e : s.run.experiments) {
      const auto name = e.measurement.experiment;
      const auto it = at.find(name);
      if (it == at.end()) {
        at[name] = recorded.experiments.size();
        recorded.experiments.push_back(std::move(e));
        continue;
      }
      auto& kept = recorded.experiments[it->second];
      if (report::has_result(e.measurement) && report::has_result(kept.measurement))
        fmt::print(stderr, "mixed: {} has a result in more than one shard; the first directory's is kept\n", name);
      else if (report::has_result(e.measurement))
        kept = std::move(e);
    }
  }
  std::vector<report::MergedShard> merged;
  const auto count = shards.front().run.shard->count;
  for (std::size_t k = 0; k < count; ++k) {
    const auto shard = series::Shard{k, count}.str();
    const auto given = std::find_if(shards.begin(), shards.end(), [&](const auto& s) { return s.run.shard->str() == shard; });
    merged.push_back({shard, given == shards.end() ? "" : fs::weakly_canonical(given->dir).string(), 0});
  }
  std::vector<std::string> missing;
  for (const auto& p : planned) {
    const auto it = at.find(p.name);
    if (it != at.end() && report::has_result(recorded.experiments[it->second].measurement)) continue;
    const auto& where = shard_of.at(p.name);
    auto m = std::find_if(merged.begin(), merged.end(), [&](const auto& x) { return x.shard == where; });
    if (m == merged.end()) m = merged.insert(merged.end(), {where, "", 0});  // a shard of a mixed count
    ++m->missing;
    std::string why = m->dir.empty() ? "whose directory was not given" : "which did not finish it";
    if (it != at.end()) {
      const auto& held = recorded.experiments[it->second].measurement;
      why = fmt::format("which did not run it: {}{}{}", outcome::to_string(held.status), held.reason.empty() ? "" : ", ", held.reason);
    }
    missing.push_back(fmt::format("{} (shard {}, {})", p.name, where, why));
  }

  const auto& first = shards.front().run;
  recorded.run_dir = shards.front().dir;
  RecordedGuesses guesses;
  try {
    guesses = recorded_guesses(recorded, planned, std::nullopt);
  } catch (const util::InputError& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "{}\n", p.str());
    return bad_input;
  }
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
  run.planned = planned.size();
  run.merged = std::move(merged);
  run.run_dir = out;
  const auto code = judge_again(run, std::move(recorded), std::move(guesses), std::move(planned), out, force,
                                fmt::format("merging {} shard{} into {}", shards.size(), shards.size() == 1 ? "" : "s", out.string()));
  if (code == cannot_write || code == bad_input) return code;  // --out could not be written, or holds a run
  if (const auto series = report::RunDirectory(shards.front().dir).series_copy(); fs::exists(series)) {
    std::error_code ignored;  // the series text is a convenience for `expr replay --series`
    fs::copy_file(series, report::RunDirectory(out).series_copy(), fs::copy_options::overwrite_existing, ignored);
  }
  fmt::print("\nmerged {} shard{} into {}: {} of {} experiments have a result\n", shards.size(), shards.size() == 1 ? "" : "s",
             report::RunDirectory(out).results().string(), run.planned - missing.size(), run.planned);
  if (missing.empty()) return code;
  fmt::print("missing {} experiment{}:\n", missing.size(), missing.size() == 1 ? "" : "s");
  for (const auto& m : missing) fmt::print("  {}\n", m);
  fmt::print("`expr show {}` says how to run them\n", out.string());
  return incomplete;
}

}  // namespace expr::cli
