// A run as the history keeps it and as `expr compare` compares it, whether it comes from a run
// directory or from the history database: per experiment its identity, status, timings with every
// raw sample, the structure of its trace, and every verdict with its numbers; per run the series,
// the revision and the environment.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/structure.hpp"
#include "outcome/measurement.hpp"
#include "report/run_result.hpp"
#include "series/series.hpp"

namespace expr::history {

struct VerdictRecord {
  std::string subject;  // the experiment's identity, or for a sweep guess "family[group]"
  std::string check;
  bool required = false;
  std::string verdict;  // "confirmed", "contradicted", "not evaluable", "pending"
  std::string observed, guessed, reason;
};

struct ExperimentRecord {
  std::string identity;  // "sdpa[backend=flash,seq=2048]": the experiment's name and axis values
  std::string family;
  std::string point;  // "backend=flash,seq=2048"; empty without axes
  std::string plugin;
  std::map<std::string, std::string> params;  // as text, the plugin's types spelled out
  Device device = Device::cpu;
  outcome::Status status = outcome::Status::skipped;
  std::string reason;
  std::optional<double> first_call_ns;
  std::optional<double> wall_seconds;  // its worker's spawn to its reaping; none in runs recorded before it was kept
  std::map<std::string, outcome::Stats> timings;  // by metric: gpu_time, host_time
  analysis::Structure structure;
};

// One timing of one experiment: "sdpa[seq=2048]", "gpu_time".
struct TimingKey {
  std::string experiment, metric;
  bool operator==(const TimingKey&) const = default;
};

struct RunRecord {
  std::string id;
  std::string series, series_file, run_dir;
  std::string revision, started, finished;
  std::map<std::string, std::string> environment;
  series::Gates gates;  // the series file's, as it was run
  std::size_t planned = 0;
  report::Tally tally;
  std::vector<ExperimentRecord> experiments;
  std::vector<VerdictRecord> verdicts;

  const ExperimentRecord* find(const std::string& identity) const;
};

// What the history keeps of a finished experiment. Reads its trace for the structure; a trace that
// cannot be read leaves the structure empty (not traced) rather than losing the timings.
ExperimentRecord snapshot(const report::ExperimentResult& e);
std::vector<VerdictRecord> verdicts(const report::RunResult& run);
// The whole run, `gates` being those of its series.
RunRecord snapshot(const report::RunResult& run, const series::Gates& gates);
// A run directory read back: its results.json, the gates of its series.yaml copy, and where the
// gate of `expr run --baseline` measured timings once more, the second measurement of those
// (take_second_measurement), as the gate compared the run and the history keeps it.
RunRecord read_run_directory(const std::filesystem::path& dir);

// Some experiments of `run` measured once more (`again`, a run of those alone) take the place of
// the first measurement: each timing of `taken`, or the whole experiment where it did not finish the
// second time (that it failed is the gate's to see). Their other timings and traces stay as first
// measured. Returns the experiments of `run` it changed.
std::vector<std::string> take_second_measurement(RunRecord& run, const RunRecord& again, const std::vector<TimingKey>& taken);
// RUN_DIR/remeasured/taken.json, which says what the second measurement in RUN_DIR/remeasured
// took the place of: written by the gate, read by read_run_directory. Throws std::runtime_error.
void write_taken(const std::filesystem::path& remeasured_dir, const std::vector<TimingKey>& taken);

// The environment keys that identify the machine a timing belongs to. Two runs that differ in one
// of them are not compared (unless asked to, loudly): another GPU model, driver, CUDA runtime or
// CPU model makes every timing a different quantity.
inline const std::vector<std::string> machine_keys{"gpu", "driver", "cuda_runtime", "cpu"};
// "cpu=...;cuda_runtime=...;driver=...;gpu=...": the machine keys a run has, for lookups.
std::string machine_fingerprint(const std::map<std::string, std::string>& environment);

struct EnvironmentDifference {
  std::string key, base, candidate;  // a side without the key has ""
  bool machine = false;              // one of machine_keys: the comparison is refused
};
std::vector<EnvironmentDifference> environment_differences(const std::map<std::string, std::string>& base,
                                                           const std::map<std::string, std::string>& candidate);

}  // namespace expr::history
