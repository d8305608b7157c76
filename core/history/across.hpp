// Runs of one series from several machines, side by side: does a finding hold on other hardware,
// or with other software? For `expr across`. Not a gate: `expr compare` refuses runs from different
// machines because each timing there is another quantity; here that difference is the subject.
//
// For every guess, its verdict and observed value in each run, the guesses whose verdicts differ
// first (a guess that one run does not have differs too); for every experiment, its key figures in
// each run (gpu_time, host_time, kernels, the main kernel and its occupancy) with each timing's
// ratio to a reference run; and every environment key whose value differs between the runs, named
// as hardware, software or instance, so that a new driver reads as plainly as a new GPU.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "history/record.hpp"

namespace expr::history {

// What an environment key says about the machine: its hardware (GPU or CPU model, SMs, memory),
// its software (driver, CUDA, LibTorch, cuDNN, kernel, expr), or which instance of it ran (host,
// GPU uuid and index).
enum class EnvironmentKind { hardware, software, instance };
std::string_view to_string(EnvironmentKind kind);
EnvironmentKind kind_of(const std::string& key);

// A run as a column: where it comes from and the machine it ran on, named by its fingerprint:
// "NVIDIA H200 · driver 580.159.04 · CUDA 13.0 · LibTorch 2.11.0 · cuDNN 9.19.0".
struct AcrossRun {
  std::string id, run_dir, started, revision;
  std::string machine;  // the name above
  std::map<std::string, std::string> environment;
};
std::string machine_name(const std::map<std::string, std::string>& environment);

struct EnvironmentRow {
  std::string key;
  EnvironmentKind kind = EnvironmentKind::software;
  std::vector<std::string> values;  // one per run; "" where a run does not have the key
};

struct VerdictCell {
  std::string verdict, observed, reason;
};

struct GuessRow {
  std::string subject, check;
  bool required = false;
  std::vector<std::optional<VerdictCell>> cells;  // one per run; none where the run has no such guess
  bool differs = false;                           // not the same verdict in every run
};

// An experiment's key figures in one run. Timings are medians in nanoseconds; the main kernel's
// figures exist where its trace had device activity.
struct Figures {
  outcome::Status status = outcome::Status::ok;
  std::optional<double> gpu_time, host_time;
  std::optional<double> kernels;
  std::string main_kernel;
  std::optional<double> occupancy;  // the main kernel's theoretical occupancy, a fraction
};

struct ExperimentRow {
  std::string identity;
  std::vector<std::optional<Figures>> cells;  // one per run; none where the run does not have it
};

struct Across {
  std::string series;
  std::vector<AcrossRun> runs;
  std::size_t reference = 0;  // the run that ratios are taken to
  std::vector<EnvironmentRow> environment;  // the keys whose values differ: hardware, then software, then instance
  std::vector<GuessRow> guesses;            // those that differ first, each part in the order of the runs' guesses
  std::vector<ExperimentRow> experiments;   // in the order of the first run that has each

  std::size_t differing() const;  // guesses whose verdicts differ
  // A timing of experiment `row` in run `run` over the reference run's; none without both.
  std::optional<double> ratio(const ExperimentRow& row, std::size_t run, const std::string& metric) const;
};

// The runs side by side, ratios to run `reference`. Throws Incomparable (compare.hpp) for fewer than
// two runs, runs of different series, a run given twice, or a reference that is not one of them.
Across across(const std::vector<RunRecord>& runs, std::size_t reference);

// For a terminal (color when it is one): the runs and their machines, what differs in their
// environment, the guesses with their verdicts (those that differ first), the experiments' figures.
std::string terminal_text(const Across& a, bool color);
// The document that schemas/expr.across-1.schema.json describes.
nlohmann::json to_json(const Across& a);
// One page that opens offline like report.html: the same tables, and each experiment's timings per
// run plotted, and their ratios to the reference.
std::string html(const Across& a);

}  // namespace expr::history
