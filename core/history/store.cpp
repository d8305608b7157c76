// The history's schema, its migrations, and reading and writing runs.
#include "history/store.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

namespace expr::history {

using nlohmann::json;

namespace {

// What stats_from reads, in its order.
constexpr std::string_view timing_columns =
    "t.median_ns, t.spread, t.count, t.iterations, t.seconds, t.converged, t.samples, t.run_to_run, t.rounds, t.run_to_run_df";

// migrations[i] takes a database from version i to version i + 1. A new version appends a step;
// a step, once released, never changes: files out there were made by it.
const std::vector<std::string_view> migrations{
    // 1: runs, their experiments, timings with raw samples, verdicts.
    R"sql(
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  series TEXT NOT NULL,
  series_file TEXT NOT NULL,
  run_dir TEXT NOT NULL,
  revision TEXT NOT NULL,
  started TEXT NOT NULL,
  finished TEXT NOT NULL,
  machine TEXT NOT NULL,        -- the machine keys of the environment (record.hpp)
  environment TEXT NOT NULL,    -- JSON object: the whole environment
  gates TEXT NOT NULL,          -- JSON: the series' gates as it was run
  planned INTEGER NOT NULL,
  confirmed INTEGER NOT NULL DEFAULT 0,
  contradicted INTEGER NOT NULL DEFAULT 0,
  not_evaluable INTEGER NOT NULL DEFAULT 0,
  required_failed INTEGER NOT NULL DEFAULT 0,
  experiments_failed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_series ON runs (series, started);
CREATE TABLE experiments (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  identity TEXT NOT NULL,       -- the experiment's name and axis values
  family TEXT NOT NULL,
  point TEXT NOT NULL,
  plugin TEXT NOT NULL,
  params TEXT NOT NULL,         -- JSON object, values as text
  device TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL,
  first_call_ns REAL,
  structure TEXT NOT NULL,      -- JSON: analysis/structure.hpp
  PRIMARY KEY (run_id, identity)
);
CREATE TABLE timings (
  run_id TEXT NOT NULL,
  identity TEXT NOT NULL,
  metric TEXT NOT NULL,         -- gpu_time, host_time
  median_ns REAL NOT NULL,
  spread REAL NOT NULL,
  count INTEGER NOT NULL,
  iterations INTEGER NOT NULL,
  seconds REAL NOT NULL,
  converged INTEGER NOT NULL,
  samples BLOB NOT NULL,        -- every sample, in ns, as native doubles in the order taken
  PRIMARY KEY (run_id, identity, metric),
  FOREIGN KEY (run_id, identity) REFERENCES experiments (run_id, identity) ON DELETE CASCADE
);
CREATE TABLE verdicts (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  subject TEXT NOT NULL,        -- the experiment's identity, or family[group] for a sweep guess
  check_text TEXT NOT NULL,
  required INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  observed TEXT NOT NULL,
  guessed TEXT NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY (run_id, position)
);
)sql",
    // 2: calibrations and each point's run-to-run noise; the gate's verdict of a run against its
    // baseline; the noise a run's timings were judged with.
    R"sql(
CREATE TABLE calibrations (
  id INTEGER PRIMARY KEY,
  series TEXT NOT NULL,
  machine TEXT NOT NULL,
  created TEXT NOT NULL,
  runs INTEGER NOT NULL,
  alpha REAL NOT NULL,
  thresholds TEXT NOT NULL,     -- JSON: metric -> fraction
  pairs INTEGER NOT NULL,
  failing_pairs INTEGER NOT NULL,
  structural_alarms INTEGER NOT NULL
);
CREATE INDEX calibrations_by_series ON calibrations (series, machine, created);
CREATE TABLE calibration_noise (
  calibration INTEGER NOT NULL REFERENCES calibrations (id) ON DELETE CASCADE,
  identity TEXT NOT NULL,
  metric TEXT NOT NULL,
  run_to_run REAL NOT NULL,     -- standard deviation of log(median) over the runs
  runs INTEGER NOT NULL,
  false_alarms INTEGER NOT NULL,
  inconclusive INTEGER NOT NULL,
  pairs INTEGER NOT NULL,
  detectable REAL NOT NULL,
  PRIMARY KEY (calibration, identity, metric)
);
ALTER TABLE runs ADD COLUMN calibration INTEGER REFERENCES calibrations (id);  -- the calibration this run was made for
ALTER TABLE runs ADD COLUMN baseline TEXT;  -- with --baseline: the run it was gated against
ALTER TABLE runs ADD COLUMN gate TEXT;      -- with --baseline: 'passed' or 'failed'
ALTER TABLE timings ADD COLUMN run_to_run REAL NOT NULL DEFAULT 0;
)sql",
    // 3: each experiment's wall time, from its worker's spawn to its reaping: what it costs a run,
    // by which shards are balanced and several workers take the longest first.
    R"sql(
ALTER TABLE experiments ADD COLUMN wall_seconds REAL;
)sql",
    // 4: each timing's rounds (the median of each worker process that timed it), by which
    // comparisons know how far the figure moves between processes; and the degrees of freedom of
    // a calibrated noise (the processes it was measured over, less one). Timings recorded before
    // have no rounds (one round, the median) and df 0 (unknown); calibrations recorded before had
    // one process per run, so their df is runs - 1.
    R"sql(
ALTER TABLE timings ADD COLUMN rounds BLOB;   -- the median of each round, in ns, as native doubles in the order they ran
ALTER TABLE timings ADD COLUMN run_to_run_df REAL NOT NULL DEFAULT 0;
ALTER TABLE calibration_noise ADD COLUMN df REAL;
UPDATE calibration_noise SET df = runs - 1;
)sql",
};

std::string_view to_text(Device d) { return d == Device::cuda ? "cuda" : "cpu"; }

json gates_json(const series::Gates& g) { return {{"thresholds", g.thresholds}, {"structure", g.structure}}; }
series::Gates gates_from(const json& j) {
  series::Gates g;
  if (const auto it = j.find("thresholds"); it != j.end())
    for (const auto& [metric, threshold] : it->items()) g.thresholds[metric] = threshold.get<double>();
  g.structure = j.value("structure", true);
  return g;
}

json structure_json(const analysis::Structure& s) {
  json figures = json::array();
  for (const auto& f : s.figures) {
    json one{{"name", f.name}, {"detail", f.detail}};
    if (const auto* d = std::get_if<double>(&f.value)) one["value"] = *d;
    else one["value"] = std::get<std::string>(f.value);
    figures.push_back(std::move(one));
  }
  return {{"traced", s.traced},
          {"device_traced", s.device_traced},
          {"ops_traced", s.ops_traced},
          {"allocator_traced", s.allocator_traced},
          {"driver_memory_traced", s.driver_memory_traced},
          {"figures", figures}};
}
analysis::Structure structure_from(const json& j) {
  analysis::Structure s;
  s.traced = j.value("traced", false);
  s.device_traced = j.value("device_traced", false);
  s.ops_traced = j.value("ops_traced", false);
  s.allocator_traced = j.value("allocator_traced", false);
  s.driver_memory_traced = j.value("driver_memory_traced", false);
  for (const auto& f : j.value("figures", json::array())) {
    analysis::StructureFigure figure{f.at("name"), 0.0, f.value("detail", "")};
    if (f.at("value").is_number()) figure.value = f.at("value").get<double>();
    else figure.value = f.at("value").get<std::string>();
    s.figures.push_back(std::move(figure));
  }
  return s;
}

// The columns of the timings table that timing_columns names, in its order from column `at`.
outcome::Stats stats_from(const Statement& row, int at) {
  outcome::Stats s;
  s.median = row.number(at);
  s.spread = row.number(at + 1);
  s.count = static_cast<std::size_t>(row.integer(at + 2));
  s.iterations = static_cast<std::size_t>(row.integer(at + 3));
  s.seconds = row.number(at + 4);
  s.converged = row.integer(at + 5) != 0;
  s.samples = row.doubles(at + 6);
  s.run_to_run = row.number(at + 7);
  s.rounds = row.doubles(at + 8);
  s.run_to_run_df = row.number(at + 9);
  if (!s.samples.empty()) {
    s.min = *std::min_element(s.samples.begin(), s.samples.end());
    s.max = *std::max_element(s.samples.begin(), s.samples.end());
    s.mean = std::accumulate(s.samples.begin(), s.samples.end(), 0.0) / static_cast<double>(s.samples.size());
  }
  return s;
}

// Every timing of run `run`, by (identity, metric).
std::map<std::pair<std::string, std::string>, outcome::Stats> timings_of(Database& db, const std::string& run) {
  Statement timings(db, fmt::format("SELECT t.identity, t.metric, {} FROM timings t WHERE t.run_id = ?1", timing_columns));
  timings.bind(1, run);
  std::map<std::pair<std::string, std::string>, outcome::Stats> out;
  while (timings.step()) out[{timings.text(0), timings.text(1)}] = stats_from(timings, 2);
  return out;
}

// Text as JSON. Strings from plugins need not be UTF-8; they are stored with U+FFFD in their place.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

const int Store::schema_version = static_cast<int>(migrations.size());

Store::Store(const std::filesystem::path& file) : db_(file) { migrate(); }

void Store::migrate() {
  // The version is read, checked and moved forward in one transaction that takes the write lock
  // first (waiting for it up to the busy timeout): expr runs started together on a history that
  // does not exist yet create it one after another, each seeing what the one before left.
  std::optional<Transaction> t;
  try {
    t.emplace(db_);
    Statement version(db_, "PRAGMA user_version");
    version.step();
    found_version_ = static_cast<int>(version.integer(0));
  } catch (const std::runtime_error& e) {
    if (db_.was_busy())
      throw std::runtime_error(fmt::format("{}: another expr held the history for longer than the 10 s it waits; try again when it has "
                                           "finished writing ({})",
                                           db_.file().string(), e.what()));
    throw std::runtime_error(fmt::format("{}: not an expr history ({})", db_.file().string(), e.what()));
  }
  if (found_version_ > schema_version)
    throw std::runtime_error(fmt::format("{}: the history has schema version {}, made by a newer expr; this expr reads up to version {}",
                                         db_.file().string(), found_version_, schema_version));
  if (found_version_ == 0) {
    // A file with tables but no version is something else's database.
    Statement tables(db_, "SELECT count(*) FROM sqlite_master");
    tables.step();
    if (tables.integer(0) > 0)
      throw std::runtime_error(fmt::format("{}: a SQLite database that is not an expr history", db_.file().string()));
  }
  for (int v = found_version_; v < schema_version; ++v) {
    try {
      db_.execute(migrations[static_cast<std::size_t>(v)]);
      db_.execute(fmt::format("PRAGMA user_version = {}", v + 1));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("migrating the history from schema version {} to {} failed, and it was left at version {}: {}",
                                           v, v + 1, found_version_, e.what()));
    }
  }
  t->commit();
}

void Store::begin_run(const RunRecord& run) {
  Transaction t(db_);
  Statement(db_,
            "INSERT OR REPLACE INTO runs (id, series, series_file, run_dir, revision, started, finished, machine, environment, gates, planned) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")
      .bind(1, run.id)
      .bind(2, run.series)
      .bind(3, run.series_file)
      .bind(4, run.run_dir)
      .bind(5, run.revision)
      .bind(6, run.started)
      .bind(7, run.finished)
      .bind(8, machine_fingerprint(run.environment))
      .bind(9, dump(json(run.environment)))
      .bind(10, dump(gates_json(run.gates)))
      .bind(11, static_cast<std::int64_t>(run.planned))
      .run();
  t.commit();
}

void Store::record_experiment(const std::string& run_id, const ExperimentRecord& e) {
  Transaction t(db_);
  Statement(db_, "DELETE FROM experiments WHERE run_id = ?1 AND identity = ?2").bind(1, run_id).bind(2, e.identity).run();
  Statement(db_,
            "INSERT INTO experiments (run_id, identity, family, point, plugin, params, device, status, reason, first_call_ns, structure, "
            "wall_seconds) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")
      .bind(1, run_id)
      .bind(2, e.identity)
      .bind(3, e.family)
      .bind(4, e.point)
      .bind(5, e.plugin)
      .bind(6, dump(json(e.params)))
      .bind(7, to_text(e.device))
      .bind(8, outcome::to_string(e.status))
      .bind(9, e.reason)
      .bind(10, e.first_call_ns)
      .bind(11, dump(structure_json(e.structure)))
      .bind(12, e.wall_seconds)
      .run();
  Statement timing(db_,
                   "INSERT INTO timings (run_id, identity, metric, median_ns, spread, count, iterations, seconds, converged, samples, run_to_run, "
                   "rounds, run_to_run_df) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  for (const auto& [metric, s] : e.timings)
    timing.bind(1, run_id)
        .bind(2, e.identity)
        .bind(3, metric)
        .bind(4, s.median)
        .bind(5, s.spread)
        .bind(6, static_cast<std::int64_t>(s.count))
        .bind(7, static_cast<std::int64_t>(s.iterations))
        .bind(8, s.seconds)
        .bind(9, std::int64_t{s.converged})
        .bind(10, s.samples)
        .bind(11, s.run_to_run)
        .bind(12, s.rounds)
        .bind(13, s.run_to_run_df)
        .run();
  t.commit();
}

void Store::finish_run(const RunRecord& run) {
  Transaction t(db_);
  const auto& c = run.tally;
  Statement(db_,
            "UPDATE runs SET finished = ?2, environment = ?3, machine = ?4, confirmed = ?5, contradicted = ?6, not_evaluable = ?7, "
            "required_failed = ?8, experiments_failed = ?9 WHERE id = ?1")
      .bind(1, run.id)
      .bind(2, run.finished)
      .bind(3, dump(json(run.environment)))
      .bind(4, machine_fingerprint(run.environment))
      .bind(5, static_cast<std::int64_t>(c.confirmed))
      .bind(6, static_cast<std::int64_t>(c.contradicted))
      .bind(7, static_cast<std::int64_t>(c.not_evaluable))
      .bind(8, static_cast<std::int64_t>(c.required_failed))
      .bind(9, static_cast<std::int64_t>(c.experiments_failed))
      .run();
  Statement(db_, "DELETE FROM verdicts WHERE run_id = ?1").bind(1, run.id).run();
  Statement insert(db_,
                   "INSERT INTO verdicts (run_id, position, subject, check_text, required, verdict, observed, guessed, reason) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  std::int64_t position = 0;
  for (const auto& v : run.verdicts)
    insert.bind(1, run.id)
        .bind(2, position++)
        .bind(3, v.subject)
        .bind(4, v.check)
        .bind(5, std::int64_t{v.required})
        .bind(6, v.verdict)
        .bind(7, v.observed)
        .bind(8, v.guessed)
        .bind(9, v.reason)
        .run();
  t.commit();
}

namespace {
constexpr std::string_view summary_columns =
    "id, series, started, finished, revision, run_dir, machine, planned, confirmed, contradicted, not_evaluable, required_failed, "
    "experiments_failed, (SELECT count(*) FROM experiments WHERE run_id = runs.id), coalesce(gate, ''), coalesce(baseline, '')";

Store::RunSummary summary_from(const Statement& s) {
  Store::RunSummary r{s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5), s.text(6),
                      static_cast<std::size_t>(s.integer(7)), static_cast<std::size_t>(s.integer(13)), {}, s.text(14), s.text(15)};
  r.tally.confirmed = static_cast<std::size_t>(s.integer(8));
  r.tally.contradicted = static_cast<std::size_t>(s.integer(9));
  r.tally.not_evaluable = static_cast<std::size_t>(s.integer(10));
  r.tally.required_failed = static_cast<std::size_t>(s.integer(11));
  r.tally.experiments_failed = static_cast<std::size_t>(s.integer(12));
  return r;
}
}  // namespace

std::vector<Store::RunSummary> Store::runs(const std::string& series, std::size_t limit) {
  Statement s(db_, fmt::format("SELECT {} FROM runs WHERE ?1 = '' OR series = ?1 ORDER BY started DESC, rowid DESC LIMIT ?2", summary_columns));
  s.bind(1, series).bind(2, static_cast<std::int64_t>(limit));
  std::vector<RunSummary> out;
  while (s.step()) out.push_back(summary_from(s));
  return out;
}

std::vector<std::string> Store::series_names() {
  Statement s(db_, "SELECT DISTINCT series FROM runs ORDER BY series");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::optional<RunRecord> Store::load(const std::string& id) {
  Statement run(db_,
                "SELECT series, series_file, run_dir, revision, started, finished, environment, gates, planned, confirmed, contradicted, "
                "not_evaluable, required_failed, experiments_failed FROM runs WHERE id = ?1");
  run.bind(1, id);
  if (!run.step()) return std::nullopt;
  RunRecord r;
  r.id = id;
  r.series = run.text(0);
  r.series_file = run.text(1);
  r.run_dir = run.text(2);
  r.revision = run.text(3);
  r.started = run.text(4);
  r.finished = run.text(5);
  r.environment = json::parse(run.text(6)).get<std::map<std::string, std::string>>();
  r.gates = gates_from(json::parse(run.text(7)));
  r.planned = static_cast<std::size_t>(run.integer(8));
  r.tally.confirmed = static_cast<std::size_t>(run.integer(9));
  r.tally.contradicted = static_cast<std::size_t>(run.integer(10));
  r.tally.not_evaluable = static_cast<std::size_t>(run.integer(11));
  r.tally.required_failed = static_cast<std::size_t>(run.integer(12));
  r.tally.experiments_failed = static_cast<std::size_t>(run.integer(13));

  Statement experiments(db_,
                        "SELECT identity, family, point, plugin, params, device, status, reason, first_call_ns, structure, wall_seconds "
                        "FROM experiments WHERE run_id = ?1 ORDER BY rowid");
  experiments.bind(1, id);
  while (experiments.step()) {
    ExperimentRecord e;
    e.identity = experiments.text(0);
    e.family = experiments.text(1);
    e.point = experiments.text(2);
    e.plugin = experiments.text(3);
    e.params = json::parse(experiments.text(4)).get<std::map<std::string, std::string>>();
    e.device = experiments.text(5) == "cuda" ? Device::cuda : Device::cpu;
    e.status = outcome::status_from(experiments.text(6)).value_or(outcome::Status::failed);
    e.reason = experiments.text(7);
    if (!experiments.is_null(8)) e.first_call_ns = experiments.number(8);
    e.structure = structure_from(json::parse(experiments.text(9)));
    if (!experiments.is_null(10)) e.wall_seconds = experiments.number(10);
    r.experiments.push_back(std::move(e));
  }
  for (auto& [point, stats] : timings_of(db_, id))
    if (auto* e = const_cast<ExperimentRecord*>(r.find(point.first))) e->timings[point.second] = std::move(stats);
  Statement verdicts(db_,
                     "SELECT subject, check_text, required, verdict, observed, guessed, reason FROM verdicts WHERE run_id = ?1 ORDER BY position");
  verdicts.bind(1, id);
  while (verdicts.step())
    r.verdicts.push_back({verdicts.text(0), verdicts.text(1), verdicts.integer(2) != 0, verdicts.text(3), verdicts.text(4), verdicts.text(5),
                          verdicts.text(6)});
  return r;
}

WallTimes Store::wall_times(const std::string& series, const std::vector<std::string>& identities, WallTimes::From from) {
  const std::set<std::string> wanted(identities.begin(), identities.end());
  Statement s(db_,
              "SELECT r.id, e.identity, e.wall_seconds FROM experiments e JOIN runs r ON r.id = e.run_id WHERE r.series = ?1 AND "
              "r.finished != '' AND e.status = 'ok' AND e.wall_seconds IS NOT NULL ORDER BY r.started DESC, r.rowid DESC");
  s.bind(1, series);
  WallTimes out;
  std::string run;
  std::map<std::string, double> of_run;  // the points of `run` read so far
  const auto covers = [&] { return of_run.size() == wanted.size(); };
  while (s.step()) {
    const auto identity = s.text(1);
    if (!wanted.count(identity)) continue;
    if (from == WallTimes::From::newest_each) {
      if (out.seconds.emplace(identity, s.number(2)).second && out.run.empty()) out.run = s.text(0);
      continue;
    }
    if (s.text(0) != run) {
      if (!run.empty() && covers()) break;
      run = s.text(0);
      of_run.clear();
    }
    of_run[identity] = s.number(2);
  }
  if (from == WallTimes::From::one_whole_run && !run.empty() && covers()) {
    out.run = run;
    out.seconds = std::move(of_run);
  }
  return out;
}

std::string Store::resolve(const std::string& reference, const std::string& series) {
  if (!reference.starts_with("@")) throw std::runtime_error(fmt::format("'{}' is not a history reference (@last, @last~N, @last-good, @ID)", reference));
  const auto colon = reference.find(':');
  const auto name = reference.substr(1, colon == std::string::npos ? std::string::npos : colon - 1);
  const auto machine = colon == std::string::npos ? std::string() : reference.substr(colon + 1);
  if (colon != std::string::npos && machine.empty())
    throw std::runtime_error(fmt::format("'{}': write a part of the machine after the colon, e.g. @last:H200", reference));
  std::size_t skip = 0;
  bool good = false;
  if (name == "last-good") {
    good = true;
  } else if (name.starts_with("last~")) {
    try {
      std::size_t used = 0;
      skip = std::stoul(name.substr(5), &used);
      if (used != name.size() - 5) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("'{}': write @last~N with a whole number N", reference));
    }
  } else if (name != "last") {
    if (!machine.empty()) throw std::runtime_error(fmt::format("'{}': @ID names one run already; a machine applies to @last, @last~N and @last-good", reference));
    Statement s(db_, "SELECT id FROM runs WHERE id = ?1");
    s.bind(1, name);
    if (!s.step()) throw std::runtime_error(fmt::format("{}: no run with id '{}' in the history", db_.file().string(), name));
    return name;
  }
  Statement s(db_, fmt::format("SELECT id FROM runs WHERE series = ?1 AND finished != ''{}{} ORDER BY started DESC, rowid DESC LIMIT 1 OFFSET ?2",
                               good ? " AND experiments_failed = 0 AND required_failed = 0 AND coalesce(gate, 'passed') = 'passed'" : "",
                               machine.empty() ? "" : " AND instr(lower(machine), lower(?3)) > 0"));
  s.bind(1, series).bind(2, static_cast<std::int64_t>(skip));
  if (!machine.empty()) s.bind(3, machine);
  if (!s.step())
    throw std::runtime_error(fmt::format("{}: no {}run of series '{}'{} to stand for {}", db_.file().string(), good ? "good " : "", series,
                                         machine.empty() ? "" : fmt::format(" on a machine matching '{}'", machine), reference));
  return s.text(0);
}

std::vector<std::string> Store::newest_on_each_machine(const std::string& series) {
  Statement s(db_,
              "SELECT id FROM runs r WHERE series = ?1 AND finished != '' AND NOT EXISTS (SELECT 1 FROM runs n WHERE n.series = r.series "
              "AND n.machine = r.machine AND n.finished != '' AND (n.started > r.started OR (n.started = r.started AND n.rowid > r.rowid))) "
              "ORDER BY started, rowid");
  s.bind(1, series);
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  if (out.empty()) throw std::runtime_error(fmt::format("{}: no finished run of series '{}' to stand for @each-machine", db_.file().string(), series));
  return out;
}

std::vector<Store::MetricPoint> Store::metric_over_time(const std::string& series, const std::string& identity, const std::string& metric,
                                                        std::size_t limit) {
  Statement s(db_, fmt::format("SELECT r.id, r.started, r.revision, r.machine, {} "
                               "FROM timings t JOIN runs r ON r.id = t.run_id WHERE r.series = ?1 AND t.identity = ?2 AND t.metric = ?3 "
                               "ORDER BY r.started DESC, r.rowid DESC LIMIT ?4",
                               timing_columns));
  s.bind(1, series).bind(2, identity).bind(3, metric).bind(4, static_cast<std::int64_t>(limit));
  std::vector<MetricPoint> out;
  while (s.step()) {
    out.push_back({s.text(0), s.text(1), s.text(2), s.text(3), stats_from(s, 4)});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

PointRuns Store::timings_over_time(const std::string& series, const std::string& machine, const std::vector<std::string>& excluded,
                                  std::size_t runs) {
  Statement s(db_, fmt::format("SELECT r.id, t.identity, t.metric, {} FROM timings t JOIN "
                               "(SELECT id, started, rowid AS position FROM runs WHERE series = ?1 AND machine = ?2 AND finished != '' "
                               "ORDER BY started DESC, rowid DESC LIMIT ?3) r ON r.id = t.run_id ORDER BY r.started, r.position",
                               timing_columns));
  s.bind(1, series).bind(2, machine).bind(3, static_cast<std::int64_t>(runs + excluded.size()));
  PointRuns out;
  while (s.step())
    if (std::find(excluded.begin(), excluded.end(), s.text(0)) == excluded.end()) out[{s.text(1), s.text(2)}].push_back(stats_from(s, 3));
  return out;
}

std::optional<Store::RunTimings> Store::timings_before(const std::string& series, const std::string& machine, const std::string& run,
                                                      const std::string& started, const std::vector<std::string>& excluded) {
  // Runs started within the same second (times are kept to the second) in the order recorded.
  Statement runs(db_,
                 "SELECT id FROM runs WHERE series = ?1 AND machine = ?2 AND finished != '' AND "
                 "(started < ?3 OR (started = ?3 AND rowid < COALESCE((SELECT rowid FROM runs WHERE id = ?4), -1))) "
                 "ORDER BY started DESC, rowid DESC LIMIT ?5");
  runs.bind(1, series).bind(2, machine).bind(3, started).bind(4, run).bind(5, static_cast<std::int64_t>(excluded.size() + 1));
  while (runs.step())
    if (std::find(excluded.begin(), excluded.end(), runs.text(0)) == excluded.end()) return RunTimings{runs.text(0), timings_of(db_, runs.text(0))};
  return std::nullopt;
}

void Store::set_gate(const std::string& run_id, const std::string& baseline, bool passed) {
  Statement(db_, "UPDATE runs SET baseline = ?2, gate = ?3 WHERE id = ?1").bind(1, run_id).bind(2, baseline).bind(3, passed ? "passed" : "failed").run();
}

std::int64_t Store::record_calibration(const Calibration& c, const std::vector<std::string>& run_ids) {
  Transaction t(db_);
  Statement(db_,
            "INSERT INTO calibrations (series, machine, created, runs, alpha, thresholds, pairs, failing_pairs, structural_alarms) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
      .bind(1, c.series)
      .bind(2, c.machine)
      .bind(3, c.created)
      .bind(4, static_cast<std::int64_t>(c.runs))
      .bind(5, c.alpha)
      .bind(6, dump(json(c.thresholds)))
      .bind(7, static_cast<std::int64_t>(c.pairs))
      .bind(8, static_cast<std::int64_t>(c.failing_pairs))
      .bind(9, static_cast<std::int64_t>(c.structural_alarms))
      .run();
  Statement last(db_, "SELECT last_insert_rowid()");
  last.step();
  const auto id = last.integer(0);
  Statement noise(db_,
                  "INSERT INTO calibration_noise (calibration, identity, metric, run_to_run, runs, false_alarms, inconclusive, pairs, detectable, df) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  for (const auto& n : c.noise)
    noise.bind(1, id)
        .bind(2, n.experiment)
        .bind(3, n.metric)
        .bind(4, n.run_to_run)
        .bind(5, static_cast<std::int64_t>(n.runs))
        .bind(6, static_cast<std::int64_t>(n.false_alarms))
        .bind(7, static_cast<std::int64_t>(n.inconclusive))
        .bind(8, static_cast<std::int64_t>(n.pairs))
        .bind(9, n.detectable)
        .bind(10, n.df)
        .run();
  Statement mark(db_, "UPDATE runs SET calibration = ?2 WHERE id = ?1");
  for (const auto& run : run_ids) mark.bind(1, run).bind(2, id).run();
  t.commit();
  return id;
}

Noise Store::noise(const std::string& series, const std::string& machine) {
  Statement s(db_,
              "SELECT identity, metric, run_to_run, df FROM calibration_noise WHERE calibration = "
              "(SELECT id FROM calibrations WHERE series = ?1 AND machine = ?2 ORDER BY created DESC, id DESC LIMIT 1)");
  s.bind(1, series).bind(2, machine);
  Noise out;
  while (s.step()) out[{s.text(0), s.text(1)}] = {s.number(2), s.number(3)};
  return out;
}

}  // namespace expr::history
