// The status a run earns, and the stop of a command on bad input.
#include "session/status.hpp"

namespace expr::session {

Status status_of(const report::Tally& t) {
  if (t.experiments_failed > 0 || t.experiments_interrupted > 0) return Status::experiment_failed;
  if (t.required_failed > 0) return Status::required_guess_failed;
  return Status::ok;
}

Status gated(Status run, Status gate) { return run == Status::experiment_failed || gate == Status::ok ? run : gate; }

Stop Stop::problems(const util::InputError& error, std::string after) {
  std::vector<Line> lines;
  for (const auto& p : error.problems()) lines.push_back({false, p.str()});
  if (!after.empty()) lines.push_back({false, std::move(after)});
  return Stop(Status::bad_input, std::move(lines));
}

}  // namespace expr::session
