// results.json written and read, and the paths of a run directory.
#include "report/run_directory.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

#include "analysis/memory.hpp"
#include "outcome/measurement_json.hpp"
#include "trace/counters.hpp"
#include "util/atomic_file.hpp"
#include "util/paths.hpp"
#include "util/text.hpp"

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

// The counters phase: its outcome and cost, and each measured launch's values by metric name (the
// Nsight Compute names, which bench/counters_vs_ncu.py compares with ncu's).
json counters_summary(const trace::Trace& t) {
  const auto& c = t.counters;
  json kernels = json::array();
  if (c.state == trace::CounterCollection::State::collected)
    for (const auto i : trace::kernels_in_launch_order(t, c.iteration)) {
      const auto& k = t.kernels[i];
      json values = json::object();
      for (std::size_t m = 0; m < c.metrics.size() && m < k.counters.size(); ++m)
        values[c.metrics[m]] = std::isfinite(k.counters[m]) ? json(k.counters[m]) : json();
      kernels.push_back({{"name", t.strings[k.name]}, {"duration_ns", k.duration()}, {"values", std::move(values)}});
    }
  return {{"state", trace::to_string(c.state)}, {"reason", c.reason},          {"metrics", c.metrics},
          {"iteration", c.iteration},           {"replay", trace::to_string(c.replay)}, {"replay_passes", c.passes},   {"ranges", c.ranges},
          {"wall_ns", c.wall},                  {"kernels", std::move(kernels)}};
}

// What one source's memory figures come to over the traced iterations: the highest peak, the mean
// allocated bytes and allocations.
json memory_summary(const std::vector<analysis::IterationMemory>& per_iteration) {
  std::int64_t peak = 0;
  double allocated = 0, allocations = 0;
  for (const auto& it : per_iteration) {
    peak = std::max(peak, it.peak);
    allocated += static_cast<double>(it.allocated);
    allocations += static_cast<double>(it.allocations);
  }
  const auto n = static_cast<double>(std::max<std::size_t>(per_iteration.size(), 1));
  return {{"peak_bytes", peak}, {"allocated_bytes", allocated / n}, {"allocations", allocations / n}};
}

json trace_summary(const outcome::Measurement& m) {
  const auto& t = *m.trace;
  json summary{{"iterations", t.iterations.size()},
               {"device_traced", t.collection.device_traced},
               {"device_unavailable", t.collection.device_unavailable},
               {"ops_traced", t.collection.ops_traced},
               {"dropped_records", t.collection.dropped_records},
               {"unattributed_records", t.collection.unattributed},
               {"records", t.record_count()},
               {"counters", counters_summary(t)}};
  // The memory figures (analysis/memory.hpp) of the experiment's device, where they were traced.
  if (t.collection.allocator_traced)
    summary["allocator_memory"] = memory_summary(analysis::memory_per_iteration(t, trace::MemorySource::allocator, m.device == Device::cuda));
  if (t.collection.device_traced && t.collection.driver_memory_traced)
    summary["driver_memory"] = memory_summary(analysis::memory_per_iteration(t, trace::MemorySource::driver, true));
  return summary;
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

// Where a series' guess was written, as results.json records it; a plugin's guess is in no file.
void write_place(const series::GuessSpec& spec, json& one) {
  if (spec.origin == series::GuessOrigin::series && spec.pos().line > 0) one["at"] = spec.pos().str();
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

// Runs `read` over the file (or line) `where`, turning what says it is not what expr writes (a JSON
// error, a value out of range: outcome::whole_number) into one error that names it.
template <class Read>
auto reading(const std::string& where, Read&& read) {
  const auto malformed = [&](const std::exception& e) { return std::runtime_error(fmt::format("{}: malformed: {}", where, e.what())); };
  try {
    return read();
  } catch (const json::exception& e) {
    throw malformed(e);
  } catch (const std::invalid_argument& e) {
    throw malformed(e);
  }
}

// A document as text, indented by `indent` (-1: one line). A string that is not UTF-8 (a plugin's
// fact, log line or guess) is written with U+FFFD in place of the bad bytes: dump() would
// otherwise throw, and no results would be written at all.
std::string text(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

// `j` as results.json holds it, appended to `out`: indented as dump(2) indents, `depth` levels in,
// but an array of numbers on one line. A timing's samples are thousands of numbers, and a line each
// made most of a sweep's results.json.
void append_indented(const json& j, int depth, std::string& out) {
  const bool numbers = j.is_array() && std::all_of(j.begin(), j.end(), [](const json& x) { return x.is_number(); });
  if (!j.is_structured() || j.empty() || numbers) {
    out += text(j, -1);
    return;
  }
  const std::string inner(2 * (depth + 1), ' ');
  out += j.is_object() ? '{' : '[';
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += it == j.begin() ? "\n" : ",\n";
    out += inner;
    if (j.is_object()) out += text(it.key(), -1) + ": ";
    append_indented(*it, depth + 1, out);
  }
  out += '\n' + std::string(2 * depth, ' ') + (j.is_object() ? '}' : ']');
}

std::string indented(const json& j, int depth) {
  std::string out;
  append_indented(j, depth, out);
  return out;
}

}  // namespace

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

RunLock RunDirectory::lock(bool create) const {
  using Why = RunDirectoryRefused::Why;
  std::error_code ec;
  if (create) fs::create_directories(root_, ec);
  if (ec) throw RunDirectoryRefused(Why::cannot_write, fmt::format("cannot write the run directory {}: {}", root_.string(), ec.message()));
  const int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    throw RunDirectoryRefused(Why::cannot_write, fmt::format("cannot write the run directory {}: {}", root_.string(), std::strerror(errno)));
  RunLock lock(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      throw RunDirectoryRefused(Why::in_use, fmt::format("{}: another expr run is writing this run directory; wait for it to end, "
                                                         "or choose another --out",
                                                         root_.string()));
    throw RunDirectoryRefused(Why::cannot_write, fmt::format("cannot lock {}: {}", root_.string(), std::strerror(errno)));
  }
  return lock;
}

RunLock RunDirectory::lock_for_resume() const { return lock(false); }

RunLock RunDirectory::create(bool replace) const {
  using Why = RunDirectoryRefused::Why;
  std::error_code ec;
  auto held = lock(true);
  // Only after the lock: a run that holds it may be creating these files right now.
  const auto experiments = root_ / "experiments";
  const bool earlier = fs::exists(results(), ec) || fs::exists(journal(), ec) || fs::exists(series_copy(), ec) || fs::exists(plan(), ec) ||
                       (fs::is_directory(experiments, ec) && !fs::is_empty(experiments, ec));
  if (earlier && !replace)
    throw RunDirectoryRefused(Why::holds_run, fmt::format("{}: holds an earlier run; choose another --out, or add --force to replace "
                                                          "that run (its results, reports and experiment folders are removed)",
                                                          root_.string()));
  if (earlier)
    for (const auto& owned : {results(), journal(), summary(), junit(), gate(), html_report(), plots(), series_copy(), plan(), traces(),
                               remeasured(), experiments}) {
      fs::remove_all(owned, ec);
      if (ec) throw RunDirectoryRefused(Why::cannot_write, fmt::format("cannot remove {}: {}", owned.string(), ec.message()));
    }
  fs::create_directories(experiments, ec);
  if (ec) throw RunDirectoryRefused(Why::cannot_write, fmt::format("cannot create {}: {}", experiments.string(), ec.message()));
  return held;
}

const std::string& RunDirectory::folder(const std::string& experiment) {
  if (const auto why = util::file_name_problem(experiment))
    throw std::runtime_error(fmt::format("the experiment name '{}' cannot name a folder: {}", util::shortened(experiment), *why));
  return experiment;
}

outcome::ExperimentFiles RunDirectory::files(const std::string& name) const {
  fs::remove_all(experiment(name));
  fs::create_directories(experiment(name));
  return {native_trace(name), worker_log(name), cold_trace(name), cold_worker_log(name)};
}

namespace {

// One experiment as results.json and the journal hold it.
json experiment_json(const ExperimentResult& e, const RunDirectory& dir) {
  const auto& m = e.measurement;
  auto x = outcome::to_json(m);
  // A sweep point's family and axis values, for tools that group points; "axes" keeps their order.
  x["family"] = e.family;
  point_json(e.point, x);
  if (m.trace) {
    x["trace_file"] = fs::relative(dir.native_trace(m.experiment), dir.root()).string();
    x["chrome_trace"] = fs::relative(dir.chrome_trace(m.experiment), dir.root()).string();
    try {
      x["trace"] = trace_summary(m);
    } catch (const std::exception& err) {
      x["trace"] = {{"unreadable", err.what()}};
    }
  }
  if (m.cold && m.cold->trace) x["cold"]["trace_file"] = fs::relative(dir.cold_trace(m.experiment), dir.root()).string();
  x["guesses"] = json::array();
  for (const auto& g : e.guesses) {
    json one{{"check", g.spec.check}, {"origin", series::to_string(g.spec.origin)}, {"required", g.spec.required}, {"why", g.spec.why}};
    write_place(g.spec, one);
    if (g.judgement) one.update(judgement_json(*g.judgement));
    else one["verdict"] = "pending";
    x["guesses"].push_back(std::move(one));
  }
  return x;
}

// Every field of results.json but the experiments' entries ("experiments" is empty).
json run_without_experiments(const RunResult& run) {
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
  if (!run.interrupted.empty()) j["interrupted"] = run.interrupted;
  j["summary"] = {{"confirmed", t.confirmed},         {"contradicted", t.contradicted},
                  {"not_evaluable", t.not_evaluable}, {"pending", t.pending},
                  {"required_failed", t.required_failed}, {"experiments_failed", t.experiments_failed},
                  {"experiments_interrupted", t.experiments_interrupted}};
  if (run.shard) {
    json plan = json::array();
    for (const auto& p : run.shard->plan) {
      json one{{"experiment", p.planned.name}, {"family", p.planned.family}, {"shard", p.shard}};
      point_json(p.planned.point, one);
      plan.push_back(std::move(one));
    }
    j["shard"] = {{"index", run.shard->index}, {"count", run.shard->count}, {"series_fingerprint", run.shard->series_fingerprint},
                  {"costs_from", run.shard->costs_from.empty() ? json() : json(run.shard->costs_from)},
                  {"plan", std::move(plan)}};
  }
  if (!run.merged.empty()) {
    j["merged"] = json::array();
    for (const auto& m : run.merged)
      j["merged"].push_back({{"shard", m.shard}, {"dir", m.dir.empty() ? json() : json(m.dir)}, {"missing", m.missing}});
  }
  j["sweep_guesses"] = json::array();
  for (const auto& s : run.sweep_guesses) {
    json one{{"family", s.family}, {"group", s.group}, {"check", s.guess.spec.check}, {"required", s.guess.spec.required}, {"why", s.guess.spec.why}};
    write_place(s.guess.spec, one);
    if (s.guess.judgement) one.update(judgement_json(*s.guess.judgement));
    else one["verdict"] = "pending";
    j["sweep_guesses"].push_back(std::move(one));
  }
  return j;
}

}  // namespace

json to_json(const RunResult& run, const RunDirectory& dir) {
  auto j = run_without_experiments(run);
  for (const auto& e : run.experiments) j["experiments"].push_back(experiment_json(e, dir));
  return j;
}

std::string results_text(const json& document) { return indented(document, 0); }

// The text of results_text(to_json(run)), without the whole run's document in memory at once: each
// experiment's document is made, written and freed in turn, then spliced into the run's. A long
// sweep's results.json is tens of megabytes and its document several times that, in small pieces
// that, once freed, stay with the process, and every worker forked after copies their page tables.
void RunDirectory::write_results(const RunResult& run) const {
  // Written an experiment at a time: the whole document of a long sweep is never in memory.
  const auto document = results_text(run_without_experiments(run));
  const std::string empty = "\n  \"experiments\": []";
  const auto at = document.find(empty);
  util::write_atomically(results(), [&](const util::WritePiece& write) {
    const std::string_view whole = document;
    if (run.experiments.empty()) {
      write(whole);
      write("\n");
      return;
    }
    write(whole.substr(0, at));
    write("\n  \"experiments\": [");
    for (const auto& e : run.experiments) {
      write(&e == &run.experiments.front() ? "\n    " : ",\n    ");
      write(indented(experiment_json(e, *this), 2));
    }
    write("\n  ]");
    write(whole.substr(at + empty.size()));
    write("\n");
  });
}

namespace {

// Reads experiments and guesses back from `file` (results.json or the journal) of the run in `root`.
class ResultReader {
 public:
  ResultReader(fs::path file, fs::path root, bool first_schema) : file_(std::move(file)), root_(std::move(root)), first_(first_schema) {}

  // A recorded guess is in no file at hand: its problems, when replay compiles it again, are
  // reported where it was written, or at the file it was read from, quoting the guess.
  series::GuessSpec guess(const json& g) const {
    const std::string check = g.at("check");
    const auto at = position_from(g.value("at", ""));
    return series::GuessSpec{check, util::TextOrigin::detached(at.line > 0 ? at : util::SourcePos{file_.string(), 0, 0}, check),
                             g.value("required", false), g.value("why", "")};
  }

  // Names become folder names (replay and merge write experiments/NAME/) and trace files are
  // opened: a results.json from elsewhere must lead nowhere outside.
  void check_folder_name(const std::string& name) const {
    if (const auto why = util::file_name_problem(name))
      throw std::runtime_error(fmt::format("{}: the experiment name '{}' cannot name a folder: {}", file_.string(), util::shortened(name), *why));
  }

  ExperimentResult experiment(const json& x) const {
    ExperimentResult e;
    e.measurement = outcome::measurement_from_json(x);
    check_folder_name(e.measurement.experiment);
    e.family = x.value("family", e.measurement.experiment);
    e.point = point_from(x);
    if (const auto trace = x.value("trace_file", ""); !trace.empty()) e.measurement.trace = trace_in_run(e.measurement.experiment, trace);
    if (e.measurement.cold)
      if (const auto trace = x.at("cold").value("trace_file", ""); !trace.empty()) {
        auto cold = *e.measurement.cold;
        cold.trace = trace_in_run(e.measurement.experiment, trace);
        e.measurement.cold = std::make_shared<const outcome::Measurement>(std::move(cold));
      }
    // expr.results/1 kept guesses under "expectations", with "source" for their origin.
    for (const auto& g : x.value(first_ ? "expectations" : "guesses", json::array())) {
      JudgedGuess r{guess(g), {}};
      r.spec.origin = g.value(first_ ? "source" : "origin", "series") == "plugin" ? series::GuessOrigin::plugin : series::GuessOrigin::series;
      if (g.value("verdict", "pending") != "pending") r.judgement = judgement_from(g);
      e.guesses.push_back(std::move(r));
    }
    return e;
  }

 private:
  outcome::TraceSource trace_in_run(const std::string& experiment, const std::string& recorded) const {
    try {
      return outcome::TraceSource(util::inside(root_, recorded));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("{}: the trace_file of {}: {}", file_.string(), util::shortened(experiment), e.what()));
    }
  }

  fs::path file_, root_;
  bool first_;
};

}  // namespace

void RunDirectory::journal_experiment(const ExperimentResult& e) const {
  util::append_durably(journal(), text(experiment_json(e, *this), -1) + "\n");
}

void RunDirectory::retire_journal() const {
  std::error_code ec;
  fs::remove(journal(), ec);  // what it held is in results.json by now; a journal left behind only repeats it
}

void RunDirectory::read_journal(RunResult& run) const {
  std::ifstream in(journal());
  if (!in) return;
  const ResultReader reader(journal(), root_, false);
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < run.experiments.size(); ++i) at[run.experiments[i].measurement.experiment] = i;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    // A record without its newline was cut short by a crash while it was appended: it was never
    // reported done, and is not read.
    if (in.eof()) break;
    auto e = reading(fmt::format("{}:{}", journal().string(), number), [&] { return reader.experiment(json::parse(line)); });
    // Later records are newer: a point run again after its run was resumed replaces the first.
    if (const auto it = at.find(e.measurement.experiment); it != at.end()) run.experiments[it->second] = std::move(e);
    else {
      at[e.measurement.experiment] = run.experiments.size();
      run.experiments.push_back(std::move(e));
    }
  }
}

RunResult RunDirectory::read() const {
  const auto file = results();
  std::error_code ec;
  if (fs::is_directory(file, ec)) throw std::runtime_error(fmt::format("{}: is a directory, not a results file", file.string()));
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: no results.json here; is this a run directory?", file.string()));
  auto run = reading(file.string(), [&] {
    RunResult run;
    run.run_dir = root_;
    const auto j = json::parse(in);
    const auto schema = j.value("schema", "");
    const bool first = schema == "expr.results/1";
    if (!first && schema != results_schema)
      throw std::runtime_error(fmt::format("schema '{}' is neither {} nor expr.results/1", schema, results_schema));
    const ResultReader reader(file, root_, first);
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
    run.interrupted = j.value("interrupted", "");
    run.environment = j.value("environment", std::map<std::string, std::string>{});
    run.planned = j.contains("planned") ? outcome::whole_number<std::size_t>(j.at("planned"), "planned") : j.at("experiments").size();
    for (const auto& x : j.at("experiments")) run.experiments.push_back(reader.experiment(x));
    for (const auto& g : j.value("sweep_guesses", json::array())) {
      JudgedSweepGuess s{g.at("family"), g.value("group", ""), {reader.guess(g), {}}};
      if (g.value("verdict", "pending") != "pending") s.guess.judgement = judgement_from(g);
      run.sweep_guesses.push_back(std::move(s));
    }
    for (const auto& m : j.value("merged", json::array()))
      run.merged.push_back({m.at("shard").get<std::string>(), m.at("dir").is_null() ? "" : m.at("dir").get<std::string>(), outcome::whole_number<std::size_t>(m.at("missing"), "merged.missing")});
    if (const auto it = j.find("shard"); it != j.end()) {
      ShardRecord shard;
      shard.index = outcome::whole_number<std::size_t>(it->at("index"), "shard.index");
      shard.count = outcome::whole_number<std::size_t>(it->at("count"), "shard.count");
      shard.series_fingerprint = it->at("series_fingerprint");
      if (const auto costs = it->find("costs_from"); costs != it->end() && !costs->is_null()) shard.costs_from = costs->get<std::string>();
      for (const auto& p : it->at("plan")) {
        shard.plan.push_back({{p.at("experiment").get<std::string>(), p.at("family").get<std::string>(), point_from(p)}, outcome::whole_number<std::size_t>(p.at("shard"), "shard.plan.shard")});
        reader.check_folder_name(shard.plan.back().planned.name);
      }
      run.shard = std::move(shard);
    }
    return run;
  });
  read_journal(run);
  return run;
}

void RunDirectory::write_plan(const RunPlan& plan) const {
  const auto& r = plan.request;
  json j{{"schema", plan_schema},
         {"request", {{"series", r.series.string()}, {"axes", r.axes}, {"filter", r.filter ? json(*r.filter) : json()},
                      {"device", r.device ? json(*r.device) : json()}, {"shard", r.shard ? json(*r.shard) : json()},
                      {"rounds", r.rounds ? json(*r.rounds) : json()}}},
         {"points", json::array()}};
  for (const auto& [name, settings] : plan.points) j["points"].push_back({{"name", name}, {"settings", settings}});
  util::write_atomically(this->plan(), text(j, 2) + "\n");
}

RunPlan RunDirectory::read_plan() const {
  const auto file = plan();
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: missing; only runs started by an expr that writes it can be resumed", file.string()));
  return reading(file.string(), [&] {
    RunPlan out;
    const auto j = json::parse(in);
    if (j.value("schema", "") != plan_schema) throw std::runtime_error(fmt::format("schema '{}' is not {}", j.value("schema", ""), plan_schema));
    const auto& r = j.at("request");
    out.request.series = r.at("series").get<std::string>();
    out.request.axes = r.value("axes", std::vector<std::string>{});
    if (!r.at("filter").is_null()) out.request.filter = r.at("filter").get<std::string>();
    if (!r.at("device").is_null()) out.request.device = r.at("device").get<std::string>();
    if (const auto shard = r.find("shard"); shard != r.end() && !shard->is_null()) out.request.shard = shard->get<std::string>();
    if (const auto rounds = r.find("rounds"); rounds != r.end() && !rounds->is_null()) out.request.rounds = outcome::whole_number<int>(*rounds, "request.rounds");
    for (const auto& p : j.at("points")) out.points.emplace_back(p.at("name").get<std::string>(), p.at("settings"));
    return out;
  });
}

}  // namespace expr::report
