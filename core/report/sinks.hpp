// The outputs of a run, one sink each (sink.hpp): results.json, summary.md, junit.xml, report.html
// with its plots and the Chrome traces in the run directory; the run's story in the log (expr.log);
// the progress line on stderr; the final report on stdout.
#pragma once

#include <chrono>
#include <memory>

#include "report/run_directory.hpp"
#include "report/sink.hpp"

namespace expr::report::sinks {

// results.json, written whole as the run begins and at the end, and in between as often as costs
// at most 5% of the run; each experiment as it finishes goes to the run directory's journal,
// synced, which is removed once results.json is whole (run_directory.hpp). Add it before the sinks
// that tell the user an experiment is done.
std::unique_ptr<Sink> results_json(RunDirectory dir);
// summary.md and junit.xml, written like results.json.
std::unique_ptr<Sink> markdown_summary(RunDirectory dir);
std::unique_ptr<Sink> junit(RunDirectory dir);
// report.html and plots/*.svg (html_report.hpp), written when the run ends: the guesses about whole
// sweeps are judged only then, and drawing every plot after each point would cost a long sweep
// time quadratic in its points. `expr replay RUN_DIR --out DIR` draws them for any run directory.
std::unique_ptr<Sink> html_report(RunDirectory dir);
// Each traced experiment's native trace, copied in when it lives elsewhere (a replay's source run),
// so the directory replays on its own.
std::unique_ptr<Sink> native_traces(RunDirectory dir);
// Each traced experiment's Chrome trace, written once when it finishes.
std::unique_ptr<Sink> chrome_traces(RunDirectory dir);

// The run's start, each experiment's placement, phases (debug) and end, and the tally, through the
// logger (util/log.hpp): expr.log once it is open.
std::unique_ptr<Sink> run_log();

// One progress line on stderr while experiments run (rewritten in place on a terminal, one line
// per phase in a log), and a line as each experiment ends.
std::unique_ptr<Sink> progress_line();
// The side-by-side table and every verdict on stdout, at the end.
std::unique_ptr<Sink> terminal_report();

}  // namespace expr::report::sinks
