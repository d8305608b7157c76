// The history file under concurrent first use: processes released at one moment onto a history
// that does not exist yet, as several `expr run` started together are, all open it.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "history/store.hpp"

namespace fs = std::filesystem;

TEST_CASE("processes opening a new history at the same moment all succeed, and it ends at the current version") {
  const auto dir = fs::temp_directory_path() / ("expr-history-race-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto file = dir / "history.sqlite";
  // Each child blocks reading the pipe until the parent closes its end: a start that no fork order
  // staggers.
  int gate[2];
  REQUIRE(::pipe(gate) == 0);
  constexpr int processes = 12;
  std::vector<pid_t> children;
  for (int k = 0; k < processes; ++k) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(gate[1]);
      char byte;
      [[maybe_unused]] const auto released = ::read(gate[0], &byte, 1);
      try {
        expr::history::Store store(file);
        ::_exit(0);
      } catch (const std::exception&) {
        ::_exit(1);
      }
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  int succeeded = 0;
  for (const pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    succeeded += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  CHECK(succeeded == processes);
  CHECK(expr::history::Store(file).found_version() == expr::history::Store::schema_version);
  fs::remove_all(dir);
}
