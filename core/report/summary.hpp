// The human-facing reports of a run: the side-by-side table of experiments, each experiment's
// guesses with their verdicts, and the "guess vs trace" block of every contradicted guess.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/run_result.hpp"
#include "report/table.hpp"

namespace expr::report {

// One row per experiment: device time, host time, first call, kernels, copies, main kernel with
// its occupancy and launch API, throughput, correctness, and the guesses' tally.
Table comparison_table(const RunResult& run);
Table comparison_table(const std::vector<const ExperimentResult*>& experiments);

// The terminal report and report.html list at most this many experiments (`expr show --all`
// lists every one): a sweep of thousands of points shows those that need a look and counts the
// rest; its plots and the guesses about whole sweeps cover every point.
inline constexpr std::size_t listed_at_most = 100;

// The experiments a report lists: every one when there are at most `at_most`; past that, those
// that did not run as they should, have a guess not confirmed or a timing warning (gpu_time against
// the trace), the first `at_most` of them.
struct Listing {
  bool brief = false;  // more experiments than `at_most`
  std::vector<const ExperimentResult*> listed;
  std::size_t needing_a_look = 0;  // listed or not
};
Listing listing(const RunResult& run, std::size_t at_most);
// "3 experiments need a look (failed, a guess not confirmed, a timing warning), the first 2 listed".
std::string needing_a_look_line(std::size_t listed, std::size_t needing_a_look);

std::string terminal_report(const RunResult& run, bool color, std::size_t at_most = listed_at_most);
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
