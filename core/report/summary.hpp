// The human-facing reports of a run: the side-by-side table of experiments, each experiment's
// guesses with their verdicts, and the "guess vs trace" block of every contradicted guess.
#pragma once

#include <string>

#include "report/run_result.hpp"
#include "report/table.hpp"

namespace expr::report {

// One row per experiment: device time, host time, first call, kernels, copies, main kernel with
// its occupancy and launch API, throughput, correctness, and the guesses' tally.
Table comparison_table(const RunResult& run);

std::string terminal_report(const RunResult& run, bool color);
std::string markdown_report(const RunResult& run);
// JUnit XML for CI dashboards, valid against schemas/junit.xsd (a subset of Jenkins' junit-10.xsd):
// a test suite per experiment, timed by its wall time, with a test case "runs" (an error when the
// experiment failed, crashed or timed out, skipped when it did not run) and one per guess; a
// suite for the guesses about whole sweeps. A required guess that is not confirmed is a failure;
// a contradicted guess that is not required is a finding, shown as the output of a passing case;
// one that could not be judged is skipped.
std::string junit_report(const RunResult& run);

}  // namespace expr::report
