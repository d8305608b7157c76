// Runs as the history keeps them: from a run's result, from a run directory.
#include "history/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "report/run_directory.hpp"
#include "series/plan.hpp"
#include "util/atomic_file.hpp"

namespace expr::history {

const ExperimentRecord* RunRecord::find(const std::string& identity) const {
  for (const auto& e : experiments)
    if (e.identity == identity) return &e;
  return nullptr;
}

namespace {

// The worker's wall time: from "spawned" to "ended" ("reaped" in runs from before it), when both
// were marked (outcome::Mark).
std::optional<double> wall_seconds(const outcome::Measurement& m) {
  const auto at = [&](const char* step) -> std::optional<double> {
    for (const auto& mark : m.timeline)
      if (mark.step == step) return static_cast<double>(mark.at);
    return std::nullopt;
  };
  const auto spawned = at("spawned"), ended = at("ended") ? at("ended") : at("reaped");
  if (!spawned || !ended || *ended < *spawned) return std::nullopt;
  return (*ended - *spawned) / 1e9;
}

}  // namespace

ExperimentRecord snapshot(const report::ExperimentResult& e) {
  const auto& m = e.measurement;
  ExperimentRecord r;
  r.identity = m.experiment;
  r.family = e.family.empty() ? m.experiment : e.family;
  for (const auto& [axis, value] : e.point) r.point += (r.point.empty() ? "" : ",") + axis + "=" + series::to_string(value);
  r.plugin = m.plugin;
  for (const auto& [k, v] : m.params) r.params[k] = series::to_string(v);
  r.device = m.device;
  r.status = m.status;
  r.reason = m.reason;
  r.first_call_ns = m.first_call_ns;
  r.wall_seconds = wall_seconds(m);
  if (m.device_time) r.timings["gpu_time"] = *m.device_time;
  if (m.host) r.timings["host_time"] = *m.host;
  try {
    r.structure = analysis::structure(m);
  } catch (const std::exception&) {
    r.structure = {};  // the trace file is gone or damaged: the timings still count
  }
  return r;
}

std::vector<VerdictRecord> verdicts(const report::RunResult& run) {
  std::vector<VerdictRecord> out;
  const auto add = [&out](const std::string& subject, const report::JudgedGuess& g) {
    VerdictRecord v{subject, g.spec.check, g.spec.required, "pending", "", "", ""};
    if (g.judgement) {
      v.verdict = std::string(expect::to_string(g.judgement->verdict));
      v.observed = g.judgement->observed;
      v.guessed = g.judgement->guessed;
      v.reason = g.judgement->reason;
    }
    out.push_back(std::move(v));
  };
  for (const auto& e : run.experiments)
    for (const auto& g : e.guesses) add(e.measurement.experiment, g);
  for (const auto& s : run.sweep_guesses) add(s.group.empty() ? s.family : s.family + "[" + s.group + "]", s.guess);
  return out;
}

RunRecord snapshot(const report::RunResult& run, const series::Gates& gates) {
  RunRecord r;
  r.id = run.id;
  r.series = run.series;
  r.series_file = run.series_file;
  r.run_dir = run.run_dir.string();
  r.revision = run.revision;
  r.started = run.started;
  r.finished = run.finished;
  r.environment = run.environment;
  r.gates = gates;
  r.planned = run.planned;
  r.tally = report::tally(run);
  for (const auto& e : run.experiments) r.experiments.push_back(snapshot(e));
  r.verdicts = verdicts(run);
  return r;
}

namespace {

std::filesystem::path taken_file(const std::filesystem::path& remeasured_dir) { return remeasured_dir / "taken.json"; }

}  // namespace

RunRecord read_run_directory(const std::filesystem::path& dir) {
  const report::RunDirectory rd(dir);
  const auto run = rd.read();
  series::Gates gates;
  // The gates the series was run with, from its copy in the run directory; a copy that no longer
  // reads leaves the defaults (the timings and traces are what matters here).
  try {
    if (std::filesystem::exists(rd.series_copy())) gates = series::read(rd.series_copy()).gates;
  } catch (const std::exception&) {
  }
  auto record = snapshot(run, gates);
  if (record.id.empty()) record.id = dir.string();  // runs recorded before results.json named them
  if (const auto file = taken_file(rd.remeasured()); std::filesystem::exists(file)) {
    std::vector<TimingKey> taken;
    try {
      std::ifstream in(file);
      const auto json = nlohmann::json::parse(in);
      for (const auto& t : json.at("timings")) taken.push_back({t.at("experiment").get<std::string>(), t.at("metric").get<std::string>()});
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(fmt::format("{}: {}", file.string(), e.what()));
    }
    take_second_measurement(record, snapshot(report::RunDirectory(rd.remeasured()).read(), gates), taken);
  }
  return record;
}

std::vector<std::string> take_second_measurement(RunRecord& run, const RunRecord& again, const std::vector<TimingKey>& taken) {
  std::vector<std::string> changed;
  for (const auto& second : again.experiments) {
    // `again` lists every experiment of the series, those its filter left out as skipped.
    const auto named = [&](const TimingKey& key) { return key.experiment == second.identity; };
    if (std::none_of(taken.begin(), taken.end(), named)) continue;
    const auto first = std::find_if(run.experiments.begin(), run.experiments.end(), [&](const auto& e) { return e.identity == second.identity; });
    if (first == run.experiments.end()) continue;
    if (second.status != outcome::Status::ok) *first = second;
    else
      for (const auto& key : taken)
        if (named(key) && second.timings.count(key.metric)) first->timings[key.metric] = second.timings.at(key.metric);
    changed.push_back(second.identity);
  }
  return changed;
}

void write_taken(const std::filesystem::path& remeasured_dir, const std::vector<TimingKey>& taken) {
  auto timings = nlohmann::json::array();
  for (const auto& t : taken) timings.push_back({{"experiment", t.experiment}, {"metric", t.metric}});
  util::write_atomically(taken_file(remeasured_dir), nlohmann::json{{"timings", timings}}.dump(2) + "\n");
}

std::string machine_fingerprint(const std::map<std::string, std::string>& environment) {
  std::string out;
  for (const auto& key : machine_keys)
    if (const auto it = environment.find(key); it != environment.end()) out += (out.empty() ? "" : ";") + key + "=" + it->second;
  return out;
}

std::vector<EnvironmentDifference> environment_differences(const std::map<std::string, std::string>& base,
                                                           const std::map<std::string, std::string>& candidate) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : base) keys.push_back(k);
  for (const auto& [k, v] : candidate)
    if (!base.count(k)) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  std::vector<EnvironmentDifference> out;
  for (const auto& key : keys) {
    const auto b = base.count(key) ? base.at(key) : "";
    const auto c = candidate.count(key) ? candidate.at(key) : "";
    if (b == c) continue;
    out.push_back({key, b, c, std::find(machine_keys.begin(), machine_keys.end(), key) != machine_keys.end()});
  }
  // The machine's differences first: they decide whether the comparison happens at all.
  std::stable_partition(out.begin(), out.end(), [](const auto& d) { return d.machine; });
  return out;
}

}  // namespace expr::history
