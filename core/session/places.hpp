// Where a command reads and writes: the history's file, a new run's directory, the lock on a run
// directory; and the shell words of the commands a command suggests next.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "history/store.hpp"
#include "report/run_directory.hpp"

namespace expr::session {

// Where runs are recorded unless --history says otherwise: $EXPR_HISTORY, else
// runs/history.sqlite (beside the run directories `expr run` makes by default).
std::filesystem::path default_history();
// Opens the history in `file`, saying on stderr when opening it migrated it. Throws what
// history::Store throws.
std::unique_ptr<history::Store> open_history(const std::filesystem::path& file);
// Where a run of `series` goes unless --out says otherwise: runs/<series><suffix>-<time>.
std::filesystem::path default_run_dir(const std::string& series, const std::string& suffix = "");

// Creates and locks a run directory for a run, replay or merge (report::RunDirectory::create).
// Stops with bad_input when it holds a run (and not `force`) or names no directory, with
// cannot_write when it cannot be written or another run holds it.
report::RunLock open_run_directory(const report::RunDirectory& dir, bool force);
// Stops with bad_input when `out` is the directory `input` itself (one inode, however each is
// written): writing there would clear what is still to be read. `what` names `input`.
void refuse_out_is_input(const std::filesystem::path& out, const std::filesystem::path& input, std::string_view what);

// A word for the shell: as it is when it needs no quoting, else in single quotes.
std::string shell_word(const std::string& word);
// The shell command that resumes the run in `run_dir`; `program` is how expr was called.
std::string resume_command(const std::string& program, const std::filesystem::path& run_dir);

}  // namespace expr::session
