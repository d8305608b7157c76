// Where commands read and write, and how the commands they suggest are quoted.
#include "session/places.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

#include "session/status.hpp"

namespace expr::session {

namespace fs = std::filesystem;

fs::path default_history() {
  if (const char* env = std::getenv("EXPR_HISTORY"); env && *env) return env;
  return fs::path("runs") / "history.sqlite";
}

std::unique_ptr<history::Store> open_history(const fs::path& file) {
  auto store = std::make_unique<history::Store>(file);
  if (store->found_version() > 0 && store->found_version() < history::Store::schema_version)
    note("{}: migrated from schema version {} to {}", store->file().string(), store->found_version(), history::Store::schema_version);
  return store;
}

fs::path default_run_dir(const std::string& series, const std::string& suffix) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return fs::path("runs") / fmt::format("{}{}-{}", series, suffix, stamp);
}

report::RunLock open_run_directory(const report::RunDirectory& dir, bool force) {
  if (dir.root().empty()) throw Stop(Status::bad_input, "--out '' names no directory; name one");
  try {
    return dir.create(force);
  } catch (const report::RunDirectoryRefused& e) {
    throw Stop(e.why == report::RunDirectoryRefused::Why::holds_run ? Status::bad_input : Status::cannot_write, e.what());
  }
}

void refuse_out_is_input(const fs::path& out, const fs::path& input, std::string_view what) {
  std::error_code ec;
  if (!fs::equivalent(out, input, ec)) return;
  throw Stop(Status::bad_input, fmt::format("--out {} is {} itself{}; write into another directory", out.string(), what,
                                            out == input ? "" : " (" + input.string() + ")"));
}

std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string resume_command(const std::string& program, const fs::path& run_dir) {
  return fmt::format("{} run --resume {}", shell_word(program), shell_word(run_dir.string()));
}

}  // namespace expr::session
