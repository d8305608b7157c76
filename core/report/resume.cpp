// A point's settings, and the check that a resumed run keeps its finished points as they ran.
#include "report/resume.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "outcome/measurement_json.hpp"

namespace expr::report {

using nlohmann::json;

json point_settings(const series::ExperimentPlan& e, const std::optional<std::string>& device) {
  json params = json::object();
  for (const auto& [name, value] : e.params.values()) params[name] = outcome::to_json(value);
  const auto& it = e.iterations;
  return {{"plugin", e.plugin->description().name},
          {"params", params},
          {"device", device ? *device : std::string(series::to_string(e.device))},
          {"iterations",
           {{"warmup", it.warmup}, {"traced", it.traced}, {"min_samples", it.min_samples}, {"min_time_s", it.min_time},
            {"max_time_s", it.max_time}, {"max_noise", it.max_noise}}},
          {"timeout_s", e.timeout},
          {"memory_bytes", e.memory ? json(*e.memory) : json()},
          {"cold_call_traced", e.trace_cold_call}};
}

RunPlan run_plan(const RunRequest& request, const series::Plan& plan) {
  RunPlan out{request, {}};
  for (const auto& e : plan.experiments) out.points.emplace_back(e.name, point_settings(e, request.device));
  return out;
}

bool has_result(const outcome::Measurement& m) {
  return m.status != outcome::Status::skipped && m.status != outcome::Status::interrupted;
}

namespace {

// "params.seq" -> value, for every leaf of a settings object.
void flatten(const json& j, const std::string& prefix, std::map<std::string, json>& out) {
  if (!j.is_object()) {
    out[prefix] = j;
    return;
  }
  for (const auto& [key, value] : j.items()) flatten(value, prefix.empty() ? key : prefix + "." + key, out);
}

std::string shown(const json* value) { return value ? value->dump() : "nothing"; }

// What differs, "params.seq: 1024 then, 2048 now; timeout_s: ...".
std::string differences(const json& then, const json& now) {
  std::map<std::string, json> a, b;
  flatten(then, "", a);
  flatten(now, "", b);
  std::vector<std::string> keys;
  for (const auto& [k, v] : a) keys.push_back(k);
  for (const auto& [k, v] : b)
    if (!a.count(k)) keys.push_back(k);
  std::string out;
  for (const auto& k : keys) {
    const auto x = a.find(k), y = b.find(k);
    const json* old_value = x == a.end() ? nullptr : &x->second;
    const json* new_value = y == b.end() ? nullptr : &y->second;
    if (old_value && new_value && *old_value == *new_value) continue;
    out += fmt::format("{}{} was {}, now {}", out.empty() ? "" : "; ", k, shown(old_value), shown(new_value));
  }
  return out;
}

}  // namespace

Changes changed_points(const RunPlan& recorded, const RunResult& run, const series::Plan& plan) {
  // Points with the same change at the same place make one problem: a default changed in a sweep
  // changes every point of it the same way.
  struct Group {
    util::SourcePos pos;
    std::string change;
    std::vector<std::string> points;
  };
  std::vector<Group> groups;
  Changes out;
  const auto add = [&groups, &out](const util::SourcePos& pos, std::string change, const std::string& point) {
    ++out.points;
    const auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.pos.str() == pos.str() && g.change == change; });
    if (it != groups.end()) it->points.push_back(point);
    else groups.push_back({pos, std::move(change), {point}});
  };
  const util::SourcePos series_file{plan.file.string(), 0, 0};
  std::map<std::string, const series::ExperimentPlan*> planned, families;
  for (const auto& e : plan.experiments) {
    planned[e.name] = &e;
    families.try_emplace(e.family, &e);
  }
  std::map<std::string, const json*> settings;
  for (const auto& [name, s] : recorded.points) settings[name] = &s;
  for (const auto& finished : run.experiments) {
    const auto& m = finished.measurement;
    if (!has_result(m)) continue;
    const auto point = planned.find(m.experiment);
    if (point == planned.end()) {
      const auto family = families.find(finished.family);
      add(family == families.end() ? series_file : family->second->name_pos, "", m.experiment);
      continue;
    }
    const auto then = settings.find(m.experiment);
    const auto now = point_settings(*point->second, recorded.request.device);
    if (then == settings.end()) add(point->second->name_pos, "no settings recorded in plan.json", m.experiment);
    else if (*then->second != now) add(point->second->name_pos, "other settings: " + differences(*then->second, now), m.experiment);
  }
  for (const auto& g : groups) {
    std::string names;
    for (std::size_t i = 0; i < g.points.size() && i < 4; ++i) names += (i ? ", " : "") + g.points[i];
    if (g.points.size() > 4) names += fmt::format(" and {} more", g.points.size() - 4);
    if (g.change.empty())
      out.problems.push_back({g.pos, g.points.size() == 1 ? fmt::format("{} finished in this run, but the series no longer plans it", names)
                                                          : fmt::format("{} points that finished in this run are no longer planned by the "
                                                                        "series: {}", g.points.size(), names)});
    else
      out.problems.push_back({g.pos, g.points.size() == 1 ? fmt::format("{} finished with {}", names, g.change)
                                                          : fmt::format("{} points finished with {} ({})", g.points.size(), g.change, names)});
  }
  return out;
}

}  // namespace expr::report
