// Everything a run produced, as the reports see it: per experiment its measurement and every
// expectation with its verdict. results.json is this, written after each experiment.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expect/check.hpp"
#include "runner/measurement.hpp"
#include "util/source.hpp"

namespace expr::report {

inline constexpr const char* results_schema = "expr.results/1";

struct ExpectationResult {
  std::string check;
  std::string source;  // "series" or "plugin"
  bool required = false;
  std::string why;
  util::SourcePos pos;
  std::optional<expect::Judgement> judgement;  // empty until every experiment it reads has finished
};

struct ExperimentResult {
  runner::Measurement measurement;
  std::vector<ExpectationResult> expectations;
};

struct RunResult {
  std::string series;
  std::string series_file;
  std::string description;
  std::filesystem::path run_dir;
  std::string started, finished;  // ISO 8601, UTC
  std::map<std::string, std::string> environment;
  std::vector<ExperimentResult> experiments;

  const ExperimentResult* find(const std::string& experiment) const;
};

// Counts over all expectations of a run.
struct Tally {
  std::size_t confirmed = 0, contradicted = 0, not_evaluable = 0, pending = 0;
  std::size_t required_failed = 0;  // required and not confirmed
  std::size_t experiments_failed = 0;  // failed, crashed or timed out
};
Tally tally(const RunResult& run);

// Host facts for the environment block: hostname, kernel, CPU, cores, expr version.
std::map<std::string, std::string> host_environment();
std::string utc_now();

}  // namespace expr::report
