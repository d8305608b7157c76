// The human-facing reports of a run: the side-by-side table of experiments, each experiment's
// guesses with their verdicts, and the "guess vs trace" block of every contradicted guess.
#pragma once

#include <string>
#include <vector>

#include "report/run_result.hpp"
#include "report/table.hpp"

namespace expr::report {

// One row per experiment: device time, host time, first call, kernels, copies, main kernel with
// its occupancy and launch API, throughput, correctness, and the guesses' tally.
Table comparison_table(const RunResult& run);

std::string terminal_report(const RunResult& run, bool color);
std::string markdown_report(const RunResult& run);
// A failed test case from outside the run's guesses: a gate against a baseline (history/).
struct JunitFailure {
  std::string suite, name, message, detail;
};

// JUnit XML, for CI test reports: one test case per guess, failing when a required one is not
// confirmed, one per experiment that failed to run, and each of `more`.
std::string junit_report(const RunResult& run, const std::vector<JunitFailure>& more = {});

}  // namespace expr::report
