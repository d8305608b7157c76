// The one place a command's status becomes the process's exit code, and a stopped command's
// messages reach the terminal.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "util/log.hpp"

namespace expr::cli {

int exit_code(session::Status status, int signal) {
  using session::Status;
  switch (status) {
    case Status::ok: return ok;
    case Status::required_guess_failed: return required_guess_failed;
    case Status::bad_input: return bad_input;
    case Status::experiment_failed: return experiment_failed;
    case Status::cannot_write: return cannot_write;
    case Status::regression: return regression;
    case Status::incomplete: return incomplete;
    case Status::interrupted: return interrupted_base + signal;
  }
  return bad_input;
}

int guarded(const std::function<int()>& command) {
  try {
    return command();
  } catch (const session::Stop& stop) {
    for (const auto& line : stop.lines()) {
      if (line.error) log::error("{}", line.text);
      else fmt::print(stderr, "{}\n", line.text);
    }
    return exit_code(stop.status());
  }
}

}  // namespace expr::cli
