// A Measurement to JSON and back.
#include "outcome/measurement_json.hpp"

#include <cmath>

namespace expr::outcome {

using nlohmann::json;

std::string_view to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::failed: return "failed";
    case Status::crashed: return "crashed";
    case Status::timed_out: return "timed_out";
    case Status::skipped: return "skipped";
    case Status::interrupted: return "interrupted";
  }
  return "?";
}

std::optional<Status> status_from(std::string_view name) {
  for (auto s : {Status::ok, Status::failed, Status::crashed, Status::timed_out, Status::skipped, Status::interrupted})
    if (to_string(s) == name) return s;
  return std::nullopt;
}

json to_json(const ParamValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

ParamValue param_from_json(const json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number()) return j.get<double>();
  return j.get<std::string>();
}

namespace {

// NaN and infinities are not JSON; a relative error of NaN must survive as such.
json number(double v) { return std::isfinite(v) ? json(v) : json(std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"); }
double number_from(const json& j) {
  if (j.is_number()) return j.get<double>();
  const auto s = j.get<std::string>();
  return s == "inf" ? INFINITY : s == "-inf" ? -INFINITY : NAN;
}

json stats_json(const Stats& s) {
  json j{{"count", s.count},   {"iterations", s.iterations}, {"median_ns", s.median}, {"mean_ns", s.mean},
         {"min_ns", s.min},    {"max_ns", s.max},            {"spread", s.spread},    {"seconds", s.seconds},
         {"converged", s.converged}, {"samples_ns", s.samples}};
  if (!s.rounds.empty()) j["rounds_ns"] = s.rounds;
  if (s.run_to_run > 0 || s.run_to_run_df > 0) j["run_to_run"] = s.run_to_run;
  if (s.run_to_run_df > 0) j["run_to_run_df"] = s.run_to_run_df;
  return j;
}

// expr.results/1 named the count "samples" and the spread "noise", and kept no samples.
Stats stats_from(const json& j) {
  Stats s;
  s.count = j.contains("count") ? whole_number<std::size_t>(j.at("count"), "count") : whole_number<std::size_t>(j.at("samples"), "samples");
  s.samples = j.value("samples_ns", std::vector<double>{});
  s.iterations = j.contains("iterations") ? whole_number<std::size_t>(j.at("iterations"), "iterations") : s.count;
  s.median = j.at("median_ns");
  s.mean = j.at("mean_ns");
  s.min = j.at("min_ns");
  s.max = j.at("max_ns");
  s.spread = j.contains("spread") ? j.at("spread").get<double>() : j.at("noise").get<double>();
  s.seconds = j.at("seconds");
  s.converged = j.at("converged");
  s.rounds = j.value("rounds_ns", std::vector<double>{});
  s.run_to_run = j.value("run_to_run", 0.0);
  s.run_to_run_df = j.value("run_to_run_df", 0.0);
  return s;
}

}  // namespace

json to_json(const Measurement& m) {
  json j{{"name", m.experiment},
         {"plugin", m.plugin},
         {"device", m.device == Device::cuda ? "cuda" : "cpu"},
         {"status", to_string(m.status)},
         {"reason", m.reason},
         {"params", json::object()},
         {"facts", m.facts},
         {"environment", m.environment},
         {"correctness", json::array()},
         {"timing", json::object()}};
  for (const auto& [k, v] : m.params) j["params"][k] = to_json(v);
  const auto& it = m.iterations;
  j["iterations"] = {{"warmup", it.warmup},       {"traced", it.traced},     {"min_samples", it.min_samples},
                     {"min_time_s", it.min_time}, {"max_time_s", it.max_time}, {"max_noise", it.max_noise},
                     {"rounds", it.rounds}};
  for (const auto& c : m.correctness)
    j["correctness"].push_back({{"what", c.what}, {"relative_error", number(c.relative_error)}, {"tolerance", c.tolerance}, {"ok", c.ok()}});
  if (m.first_call_ns) j["timing"]["first_call_ns"] = *m.first_call_ns;
  if (m.host) j["timing"]["host"] = stats_json(*m.host);
  if (m.device_time) j["timing"]["device"] = stats_json(*m.device_time);
  if (m.loop_time) j["timing"]["loop"] = stats_json(*m.loop_time);
  if (!m.queue_not_held.empty()) j["timing"]["queue_not_held"] = m.queue_not_held;
  if (!m.timing_warning.empty()) j["timing"]["warning"] = m.timing_warning;
  if (m.wall_seconds) j["timing"]["wall_seconds"] = *m.wall_seconds;
  if (m.work) j["work"] = {{"flops", m.work->flops}, {"bytes", m.work->bytes}};
  if (!m.setup_warning.empty()) j["setup_warning"] = m.setup_warning;
  if (!m.timeline.empty()) {
    j["timeline"] = json::array();
    for (const auto& mark : m.timeline) j["timeline"].push_back({{"step", mark.step}, {"at_ns", mark.at}});
  }
  if (m.cold) j["cold"] = to_json(*m.cold);
  return j;
}

Measurement measurement_from_json(const json& j) {
  Measurement m;
  m.experiment = j.at("name");
  m.plugin = j.at("plugin");
  m.device = j.at("device") == "cuda" ? Device::cuda : Device::cpu;
  m.status = status_from(j.at("status").get<std::string>()).value_or(Status::failed);
  m.reason = j.value("reason", "");
  for (const auto& [k, v] : j.at("params").items()) m.params[k] = param_from_json(v);
  if (const auto it = j.find("iterations"); it != j.end())
    // Runs recorded before rounds existed timed in one worker.
    m.iterations = {whole_number<int>(it->at("warmup"), "iterations.warmup"),
                    whole_number<int>(it->at("traced"), "iterations.traced"),
                    whole_number<int>(it->at("min_samples"), "iterations.min_samples"),
                    it->at("min_time_s"),
                    it->at("max_time_s"),
                    it->at("max_noise"),
                    it->contains("rounds") ? whole_number<int>(it->at("rounds"), "iterations.rounds") : 1};
  m.facts = j.value("facts", std::map<std::string, std::string>{});
  m.environment = j.value("environment", std::map<std::string, std::string>{});
  for (const auto& c : j.value("correctness", json::array()))
    m.correctness.push_back({c.at("what"), number_from(c.at("relative_error")), c.at("tolerance")});
  const auto& t = j.at("timing");
  if (t.contains("first_call_ns")) m.first_call_ns = t.at("first_call_ns").get<double>();
  if (t.contains("host")) m.host = stats_from(t.at("host"));
  if (t.contains("device")) m.device_time = stats_from(t.at("device"));
  if (t.contains("loop")) m.loop_time = stats_from(t.at("loop"));
  m.queue_not_held = t.value("queue_not_held", "");
  m.timing_warning = t.value("warning", "");
  if (t.contains("wall_seconds")) m.wall_seconds = t.at("wall_seconds").get<double>();
  if (j.contains("work")) m.work = Work{j.at("work").at("flops"), j.at("work").at("bytes")};
  m.setup_warning = j.value("setup_warning", "");
  for (const auto& mark : j.value("timeline", json::array()))
    m.timeline.push_back({mark.at("step"), whole_number<trace::Ns>(mark.at("at_ns"), "timeline.at_ns")});
  if (j.contains("cold")) m.cold = std::make_shared<const Measurement>(measurement_from_json(j.at("cold")));
  return m;
}

}  // namespace expr::outcome
