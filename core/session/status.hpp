// How a command ended, as data: the Status the command line turns into the process's exit code
// (cli/exit_code.cpp, the one place that does), and Stop, the exception a command ends early with,
// carrying its status and what to say.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/run_result.hpp"
#include "util/source.hpp"

namespace expr::session {

// README.md ("Exit codes") gives each its number.
enum class Status {
  ok,
  required_guess_failed,  // a guess marked required was contradicted or could not be judged
  bad_input,              // usage, series file, plugin or guess errors: nothing ran; or runs that cannot be compared or merged
  experiment_failed,      // an experiment failed, crashed, timed out or was interrupted
  cannot_write,           // the run directory or the history could not be written, or another run is writing it
  regression,             // compared with a baseline, a regression beyond the gates
  incomplete,             // merge: experiments of the series are missing
  interrupted,            // `expr run` stopped by a signal (the outcome says which)
};

// The status a finished run, replay or merge earns from its tally: a failed or interrupted
// experiment over a required guess that failed.
Status status_of(const report::Tally& tally);
// A run's status once gated against a baseline (the gate's status: ok, regression, or bad_input
// when the two cannot be compared): a failed experiment says more than a slow one, a regression
// more than a guess.
Status gated(Status run, Status gate);

// A command stopped before its end: its status and what it says on stderr, in order.
class Stop : public std::exception {
 public:
  struct Line {
    bool error;        // said as an error ("error: TEXT", and into the run's expr.log when one is open)
    std::string text;  // else printed as it stands
  };
  Stop(Status status, std::string error) : status_(status), lines_{{true, std::move(error)}} {}
  Stop(Status status, std::vector<Line> lines) : status_(status), lines_(std::move(lines)) {}
  // The problems of an input, each rendered at its place in the file, then `after` when given.
  static Stop problems(const util::InputError& error, std::string after = {});

  Status status() const { return status_; }
  const std::vector<Line>& lines() const { return lines_; }
  const char* what() const noexcept override { return lines_.empty() ? "" : lines_.back().text.c_str(); }

 private:
  Status status_;
  std::vector<Line> lines_;
};

// Runs `step`; an exception it throws stops the command with `status`, saying the exception's
// message after `context`. A Stop passes as it is; the problems of an input (util::InputError)
// stop it with bad_input, each said at its place.
template <class Step>
auto or_stop(Status status, Step&& step, std::string_view context = {}) -> decltype(step()) {
  try {
    return step();
  } catch (const Stop&) {
    throw;
  } catch (const util::InputError& e) {
    throw Stop::problems(e);
  } catch (const std::exception& e) {
    throw Stop(status, fmt::format("{}{}", context, e.what()));
  }
}

// A line on stderr about what the command is doing ("resuming ...", "one worker per GPU: ...").
template <class... Args>
void note(fmt::format_string<Args...> format, Args&&... args) {
  fmt::print(stderr, "{}\n", fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace expr::session
