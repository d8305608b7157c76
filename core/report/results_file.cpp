#include "report/results_file.hpp"

#include <fmt/format.h>

#include <fstream>

#include "runner/measurement_json.hpp"
#include "trace/trace_file.hpp"
#include "util/atomic_file.hpp"

namespace expr::report {

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

}  // namespace

json to_json(const RunResult& run) {
  json j{{"schema", results_schema},
         {"series", {{"name", run.series}, {"file", run.series_file}, {"description", run.description}}},
         {"started", run.started},
         {"finished", run.finished},
         {"environment", run.environment},
         {"experiments", json::array()}};
  const auto t = tally(run);
  j["summary"] = {{"confirmed", t.confirmed},         {"contradicted", t.contradicted},
                  {"not_evaluable", t.not_evaluable}, {"pending", t.pending},
                  {"required_failed", t.required_failed}, {"experiments_failed", t.experiments_failed}};
  for (const auto& e : run.experiments) {
    auto x = runner::to_json(e.measurement);
    if (e.measurement.trace) x["trace"] = trace_summary(*e.measurement.trace);
    x["expectations"] = json::array();
    for (const auto& ex : e.expectations) {
      json one{{"check", ex.check}, {"source", ex.source}, {"required", ex.required}, {"why", ex.why}};
      if (ex.pos.line > 0) one["at"] = ex.pos.str();
      if (ex.judgement) one.update(judgement_json(*ex.judgement));
      else one["verdict"] = "pending";
      x["expectations"].push_back(std::move(one));
    }
    j["experiments"].push_back(std::move(x));
  }
  return j;
}

// A string that is not UTF-8 (a plugin's fact, log line or guess) is written with U+FFFD in place
// of the bad bytes: dump() would otherwise throw, and no results would be written at all.
void write_results(const RunResult& run) {
  util::write_atomically(run.run_dir / "results.json", to_json(run).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

RunResult read_results(const std::filesystem::path& run_dir) {
  const auto file = run_dir / "results.json";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: no results.json here; is this a run directory?", file.string()));
  RunResult run;
  run.run_dir = run_dir;
  try {
    const auto j = json::parse(in);
    if (j.value("schema", "") != results_schema)
      throw std::runtime_error(fmt::format("schema '{}' is not {}", j.value("schema", ""), results_schema));
    run.series = j.at("series").at("name");
    run.series_file = j.at("series").value("file", "");
    run.description = j.at("series").value("description", "");
    run.started = j.value("started", "");
    run.finished = j.value("finished", "");
    run.environment = j.value("environment", std::map<std::string, std::string>{});
    for (const auto& x : j.at("experiments")) {
      ExperimentResult e;
      e.measurement = runner::measurement_from_json(x);
      if (!e.measurement.trace_file.empty())
        e.measurement.trace = std::make_shared<trace::Trace>(trace::load(run_dir / e.measurement.trace_file));
      for (const auto& ex : x.value("expectations", json::array())) {
        ExpectationResult r{ex.at("check"), ex.value("source", "series"), ex.value("required", false), ex.value("why", ""), {}, {}};
        if (ex.value("verdict", "pending") != "pending") r.judgement = judgement_from(ex);
        e.expectations.push_back(std::move(r));
      }
      run.experiments.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("{}: malformed: {}", file.string(), e.what()));
  }
  return run;
}

}  // namespace expr::report
