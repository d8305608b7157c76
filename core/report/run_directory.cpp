// results.json written and read, and the paths of a run directory.
#include "report/run_directory.hpp"

#include <fmt/format.h>

#include <fstream>

#include "outcome/measurement_json.hpp"
#include "util/atomic_file.hpp"

namespace expr::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json judgement_json(const expect::Judgement& j) {
  json out{{"verdict", expect::to_string(j.verdict)}, {"observed", j.observed}, {"guessed", j.guessed}, {"evidence", j.evidence}};
  if (!j.reason.empty()) out["reason"] = j.reason;
  if (!j.caveats.empty()) out["caveats"] = j.caveats;
  return out;
}

expect::Judgement judgement_from(const json& j) {
  expect::Judgement out;
  const auto v = j.at("verdict").get<std::string>();
  out.verdict = v == "confirmed" ? expect::Verdict::confirmed : v == "contradicted" ? expect::Verdict::contradicted
                                                                                    : expect::Verdict::not_evaluable;
  out.observed = j.value("observed", "");
  out.guessed = j.value("guessed", "");
  out.evidence = j.value("evidence", "");
  out.reason = j.value("reason", "");
  out.caveats = j.value("caveats", std::vector<std::string>{});
  return out;
}

json trace_summary(const trace::Trace& t) {
  return {{"iterations", t.iterations.size()},
          {"device_traced", t.collection.device_traced},
          {"device_unavailable", t.collection.device_unavailable},
          {"ops_traced", t.collection.ops_traced},
          {"dropped_records", t.collection.dropped_records},
          {"unattributed_records", t.collection.unattributed},
          {"records", t.record_count()}};
}

// "file:line:column" as results.json writes a guess's place, back to a position.
util::SourcePos position_from(const std::string& at) {
  util::SourcePos pos;
  const auto column = at.rfind(':');
  const auto line = column == std::string::npos ? std::string::npos : at.rfind(':', column - 1);
  if (line == std::string::npos) return pos;
  try {
    pos.file = at.substr(0, line);
    pos.line = std::stoi(at.substr(line + 1, column - line - 1));
    pos.column = std::stoi(at.substr(column + 1));
  } catch (const std::exception&) {
    return {};
  }
  return pos;
}

json param_json(const ParamValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

ParamValue param_from(const json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number()) return j.get<double>();
  return j.get<std::string>();
}

// A sweep point's axis values as "axes" (their order) and "point" in `out`, and back.
void point_json(const series::AxisPoint& point, json& out) {
  out["axes"] = json::array();
  out["point"] = json::object();
  for (const auto& [axis, value] : point) {
    out["axes"].push_back(axis);
    out["point"][axis] = param_json(value);
  }
}

series::AxisPoint point_from(const json& x) {
  series::AxisPoint point;
  for (const auto& axis : x.value("axes", json::array())) point.emplace_back(axis, param_from(x.at("point").at(axis.get<std::string>())));
  return point;
}

}  // namespace

void RunDirectory::create() const {
  std::error_code ec;
  fs::create_directories(root_ / "experiments", ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", (root_ / "experiments").string(), ec.message()));
}

runner::ExperimentFiles RunDirectory::files(const std::string& name) const {
  fs::remove_all(experiment(name));
  fs::create_directories(experiment(name));
  return {native_trace(name), worker_log(name), cold_trace(name), cold_worker_log(name)};
}

json to_json(const RunResult& run, const RunDirectory& dir) {
  json j{{"schema", results_schema},
         {"run", {{"id", run.id}, {"revision", run.revision}}},
         {"series", {{"name", run.series}, {"file", run.series_file}, {"description", run.description}}},
         {"started", run.started},
         {"resumed", run.resumed},
         {"finished", run.finished},
         {"planned", run.planned},
         {"environment", run.environment},
         {"experiments", json::array()}};
  const auto t = tally(run);
  j["summary"] = {{"confirmed", t.confirmed},         {"contradicted", t.contradicted},
                  {"not_evaluable", t.not_evaluable}, {"pending", t.pending},
                  {"required_failed", t.required_failed}, {"experiments_failed", t.experiments_failed}};
  for (const auto& e : run.experiments) {
    const auto& m = e.measurement;
    auto x = outcome::to_json(m);
    // A sweep point's family and axis values, for tools that group points; "axes" keeps their order.
    x["family"] = e.family;
    point_json(e.point, x);
    if (m.trace) {
      x["trace_file"] = fs::relative(dir.native_trace(m.experiment), dir.root()).string();
      x["chrome_trace"] = fs::relative(dir.chrome_trace(m.experiment), dir.root()).string();
      try {
        x["trace"] = trace_summary(*m.trace);
      } catch (const std::exception& err) {
        x["trace"] = {{"unreadable", err.what()}};
      }
    }
    if (m.cold && m.cold->trace) x["cold"]["trace_file"] = fs::relative(dir.cold_trace(m.experiment), dir.root()).string();
    x["guesses"] = json::array();
    for (const auto& g : e.guesses) {
      json one{{"check", g.spec.check}, {"origin", series::to_string(g.spec.origin)}, {"required", g.spec.required}, {"why", g.spec.why}};
      if (g.spec.pos.line > 0) one["at"] = g.spec.pos.str();
      if (g.judgement) one.update(judgement_json(*g.judgement));
      else one["verdict"] = "pending";
      x["guesses"].push_back(std::move(one));
    }
    j["experiments"].push_back(std::move(x));
  }
  if (run.shard) {
    json plan = json::array();
    for (const auto& p : run.shard->plan) {
      json one{{"experiment", p.planned.name}, {"family", p.planned.family}, {"shard", p.shard}};
      point_json(p.planned.point, one);
      plan.push_back(std::move(one));
    }
    j["shard"] = {{"index", run.shard->index}, {"count", run.shard->count}, {"series_fingerprint", run.shard->series_fingerprint},
                  {"plan", std::move(plan)}};
  }
  j["sweep_guesses"] = json::array();
  for (const auto& s : run.sweep_guesses) {
    json one{{"family", s.family}, {"group", s.group}, {"check", s.guess.spec.check}, {"required", s.guess.spec.required}, {"why", s.guess.spec.why}};
    if (s.guess.spec.pos.line > 0) one["at"] = s.guess.spec.pos.str();
    if (s.guess.judgement) one.update(judgement_json(*s.guess.judgement));
    else one["verdict"] = "pending";
    j["sweep_guesses"].push_back(std::move(one));
  }
  return j;
}

// A string that is not UTF-8 (a plugin's fact, log line or guess) is written with U+FFFD in place
// of the bad bytes: dump() would otherwise throw, and no results would be written at all.
void RunDirectory::write_results(const RunResult& run) const {
  util::write_atomically(results(), to_json(run, *this).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

RunResult RunDirectory::read() const {
  const auto file = results();
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: no results.json here; is this a run directory?", file.string()));
  RunResult run;
  run.run_dir = root_;
  try {
    const auto j = json::parse(in);
    const auto schema = j.value("schema", "");
    // expr.results/1 kept guesses under "expectations", with "source" for their origin.
    const bool first = schema == "expr.results/1";
    if (!first && schema != results_schema)
      throw std::runtime_error(fmt::format("schema '{}' is neither {} nor expr.results/1", schema, results_schema));
    if (const auto it = j.find("run"); it != j.end()) {
      run.id = it->value("id", "");
      run.revision = it->value("revision", "");
    }
    run.series = j.at("series").at("name");
    run.series_file = j.at("series").value("file", "");
    run.description = j.at("series").value("description", "");
    run.started = j.value("started", "");
    run.resumed = j.value("resumed", std::vector<std::string>{});
    run.finished = j.value("finished", "");
    run.environment = j.value("environment", std::map<std::string, std::string>{});
    run.planned = j.value("planned", j.at("experiments").size());
    for (const auto& x : j.at("experiments")) {
      ExperimentResult e;
      e.measurement = outcome::measurement_from_json(x);
      e.family = x.value("family", e.measurement.experiment);
      e.point = point_from(x);
      if (const auto trace = x.value("trace_file", ""); !trace.empty()) e.measurement.trace = outcome::TraceSource(root_ / trace);
      if (e.measurement.cold)
        if (const auto trace = x.at("cold").value("trace_file", ""); !trace.empty()) {
          auto cold = *e.measurement.cold;
          cold.trace = outcome::TraceSource(root_ / trace);
          e.measurement.cold = std::make_shared<const outcome::Measurement>(std::move(cold));
        }
      for (const auto& g : x.value(first ? "expectations" : "guesses", json::array())) {
        JudgedGuess r;
        r.spec.check = g.at("check");
        r.spec.origin = g.value(first ? "source" : "origin", "series") == "plugin" ? series::GuessOrigin::plugin : series::GuessOrigin::series;
        r.spec.required = g.value("required", false);
        r.spec.why = g.value("why", "");
        r.spec.pos = position_from(g.value("at", ""));
        if (g.value("verdict", "pending") != "pending") r.judgement = judgement_from(g);
        e.guesses.push_back(std::move(r));
      }
      run.experiments.push_back(std::move(e));
    }
    for (const auto& g : j.value("sweep_guesses", json::array())) {
      SweepVerdict s;
      s.family = g.at("family");
      s.group = g.value("group", "");
      s.guess.spec.check = g.at("check");
      s.guess.spec.required = g.value("required", false);
      s.guess.spec.why = g.value("why", "");
      s.guess.spec.pos = position_from(g.value("at", ""));
      if (g.value("verdict", "pending") != "pending") s.guess.judgement = judgement_from(g);
      run.sweep_guesses.push_back(std::move(s));
    }
    if (const auto it = j.find("shard"); it != j.end()) {
      ShardRecord shard;
      shard.index = it->at("index");
      shard.count = it->at("count");
      shard.series_fingerprint = it->at("series_fingerprint");
      for (const auto& p : it->at("plan"))
        shard.plan.push_back({{p.at("experiment").get<std::string>(), p.at("family").get<std::string>(), point_from(p)}, p.at("shard").get<std::size_t>()});
      run.shard = std::move(shard);
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("{}: malformed: {}", file.string(), e.what()));
  }
  return run;
}

const json* RunPlan::settings(const std::string& point) const {
  for (const auto& [name, settings] : points)
    if (name == point) return &settings;
  return nullptr;
}

void RunDirectory::write_plan(const RunPlan& plan) const {
  const auto& r = plan.request;
  json j{{"schema", plan_schema},
         {"request", {{"series", r.series.string()}, {"axes", r.axes}, {"filter", r.filter ? json(*r.filter) : json()},
                      {"device", r.device ? json(*r.device) : json()}, {"shard", r.shard ? json(*r.shard) : json()}}},
         {"points", json::array()}};
  for (const auto& [name, settings] : plan.points) j["points"].push_back({{"name", name}, {"settings", settings}});
  util::write_atomically(this->plan(), j.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

RunPlan RunDirectory::read_plan() const {
  const auto file = plan();
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: missing; only runs started by an expr that writes it can be resumed", file.string()));
  RunPlan out;
  try {
    const auto j = json::parse(in);
    if (j.value("schema", "") != plan_schema) throw std::runtime_error(fmt::format("schema '{}' is not {}", j.value("schema", ""), plan_schema));
    const auto& r = j.at("request");
    out.request.series = r.at("series").get<std::string>();
    out.request.axes = r.value("axes", std::vector<std::string>{});
    if (!r.at("filter").is_null()) out.request.filter = r.at("filter").get<std::string>();
    if (!r.at("device").is_null()) out.request.device = r.at("device").get<std::string>();
    if (const auto shard = r.find("shard"); shard != r.end() && !shard->is_null()) out.request.shard = shard->get<std::string>();
    for (const auto& p : j.at("points")) out.points.emplace_back(p.at("name").get<std::string>(), p.at("settings"));
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("{}: malformed: {}", file.string(), e.what()));
  }
  return out;
}

}  // namespace expr::report
