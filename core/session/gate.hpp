// The gate of `expr run --baseline`, once the run is compared with its baseline: its failures as
// JUnit test cases, and where the verdict is written (summary.md, junit.xml, the history). The
// re-measurement of inconclusive experiments that comes before needs the runner (measure/run.hpp).
#pragma once

#include <string>
#include <vector>

#include "history/compare.hpp"
#include "history/store.hpp"
#include "report/run_result.hpp"
#include "report/summary.hpp"

namespace expr::session {

// One failed test case of the suite "SERIES.gate" for each figure slower than the baseline, each
// structural regression (when the structure is gated), each experiment that failed in the
// candidate or is missing from it.
std::vector<report::JunitFailure> gate_failures(const history::Comparison& comparison, const std::string& series);

// The verdict in a few lines, for `expr show`: the baseline, the count of each kind of change,
// each of `failures` and the comparison's notes (what a second measurement showed).
std::string gate_text(const history::Comparison& comparison, const std::vector<report::JunitFailure>& failures);

// Writes the run's summary with the comparison, its junit.xml with the gate's failures, gate.txt
// (gate_text), report.html with the comparison first, and the verdict against `base_id` into `store` (when given). Returns why that could not be written, empty
// when it was.
std::string record_gate(const report::RunResult& run, const history::Comparison& comparison, history::Store* store, const std::string& base_id);

}  // namespace expr::session
