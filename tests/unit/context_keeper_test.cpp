// The process that holds a CUDA context while a run lasts (runner/context_keeper.hpp) must not
// hold the run's files: a worker's pipe kept open in it would never report the worker's end. And
// it must be gone with the run. Without a GPU it makes no context and still behaves so.
#include <doctest/doctest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "runner/context_keeper.hpp"

TEST_CASE("the context keeper holds none of the parent's files and leaves no process behind") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  {
    const expr::runner::ContextKeeper keeper(-1);
    ::close(fds[1]);
    // The parent's write end was the last one: the reader sees the end while the keeper still runs.
    pollfd p{fds[0], POLLIN, 0};
    REQUIRE(::poll(&p, 1, 10'000) == 1);
    char c = 0;
    CHECK(::read(fds[0], &c, 1) == 0);
  }
  ::close(fds[0]);
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}
