// Judging recorded experiments again: `expr replay` (a run's guesses, or edited ones, against its
// recorded measurements and traces), and the path `expr merge` shares with it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expect/guesses.hpp"
#include "expect/sweep.hpp"
#include "report/run_result.hpp"
#include "session/options.hpp"
#include "session/status.hpp"

namespace expr::session {

// The guesses a recorded run is judged with again: those recorded, with the series' own replaced
// by those of `series_file` when one is given. `planned` is every experiment of the series, as
// guesses that name a family resolve against it. Throws util::InputError.
struct RecordedGuesses {
  std::map<std::string, std::vector<expect::CompiledGuess>> points;  // per experiment
  std::vector<expect::CompiledSweepGuess> sweeps;
};
RecordedGuesses recorded_guesses(const report::RunResult& recorded, const std::vector<report::PlannedPoint>& planned,
                                 const std::optional<std::filesystem::path>& series_file);

// Judges the recorded experiments again into `run` and tells the outputs: the run directory `out`
// when given (results.json, reports, traces, expr.log, which begins with `story`: what is being
// judged again; an earlier run there is replaced only with `force`), the terminal report always.
// Returns the status the judged run earns; stops when `out` cannot be written.
Status judge_again(report::RunResult& run, report::RunResult recorded, RecordedGuesses guesses, std::vector<report::PlannedPoint> planned,
                   const std::optional<std::filesystem::path>& out, bool force, std::string_view story);

// What a replay or a merge made: the run judged again, and the status it earns.
struct Judged {
  report::RunResult run;
  Status status = Status::ok;
};
// `expr replay`. Stops with bad_input when the recorded run or the guesses cannot be read.
Judged replay(const ReplayArgs& args);

}  // namespace expr::session
