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

// JUnit XML for CI dashboards, valid against schemas/junit.xsd (a subset of Jenkins' junit-10.xsd):
// a test suite per experiment, timed by its wall time, with a test case "runs" (an error when the
// experiment failed, crashed or timed out, skipped when it did not run) and one per guess; a
// suite for the guesses about whole sweeps. A required guess that is not confirmed is a failure;
// a contradicted guess that is not required is a finding, shown as the output of a passing case;
// one that could not be judged is skipped. Each of `more` is a failed case in the suite it names.
std::string junit_report(const RunResult& run, const std::vector<JunitFailure>& more = {});

}  // namespace expr::report
