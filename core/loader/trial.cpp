// Opening a plugin library in a child process first (loader/trial.hpp).
#include "loader/trial.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

#include "loader/plugin_library.hpp"

namespace expr::loader {

namespace {

// The child's report: "ok" or "error:" and the message, ended by a NUL so that the parent knows
// it is whole without waiting for the pipe to close (a constructor may have started a process
// that holds it open).
constexpr char report_end = '\0';

[[noreturn]] void child(int write_fd, pid_t parent, const std::function<void()>& open) {
  ::setpgid(0, 0);  // its own group, so whatever a constructor started is stopped with it
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);  // expr died before the line above
  std::string report;
  try {
    open();
    report = "ok";
  } catch (const std::exception& e) {
    report = std::string("error:") + e.what();
  }
  report += report_end;
  for (std::size_t sent = 0; sent < report.size();) {
    const auto n = ::write(write_fd, report.data() + sent, report.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  // _exit: the library's static destructors are as untrusted as its constructors.
  ::_exit(0);
}

// What the child said and whether it ended, watched until its report is whole, it ends, or
// `deadline` passes. The child's end is watched through a pidfd: the pipe alone cannot tell, as a
// constructor may close it or hand it to a process of its own.
struct Watched {
  std::string report;
  bool whole = false;  // the report ended with report_end
  bool ended = false;  // the child ended (or is about to, having sent its whole report)
};

Watched watch(pid_t pid, int fd, std::chrono::steady_clock::time_point deadline) {
  Watched w;
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  bool pipe_open = true;
  while (!w.whole && !w.ended) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p[2] = {{pipe_open ? fd : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
    if (::poll(p, 2, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) break;
    if (p[0].revents != 0) {
      char buffer[4096];
      const auto n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) w.report.append(buffer, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) pipe_open = false;
      if (const auto end = w.report.find(report_end); end != std::string::npos) {
        w.report.resize(end);
        w.whole = w.ended = true;
      }
    }
    // Without a pidfd (a kernel before 5.3) the pipe's end stands for the child's.
    if (p[1].revents != 0 || (pidfd < 0 && !pipe_open)) w.ended = true;
  }
  if (pidfd >= 0) ::close(pidfd);
  return w;
}

}  // namespace

std::chrono::milliseconds load_timeout() {
  if (const char* text = std::getenv("EXPR_PLUGIN_LOAD_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0 && seconds < 86400) return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
  }
  return std::chrono::seconds(60);
}

void open_in_child_first(const std::filesystem::path& file, const std::function<void()>& open, std::chrono::milliseconds timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw LoadError(fmt::format("{}: cannot create a pipe to open it in a child: {}", file.string(), std::strerror(errno)));
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], parent, open);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    throw LoadError(fmt::format("{}: cannot start a process to open it in: {}", file.string(), std::strerror(errno)));
  }
  ::setpgid(pid, pid);
  const auto w = watch(pid, fds[0], std::chrono::steady_clock::now() + timeout);
  ::close(fds[0]);
  // The child's group is stopped before the child is reaped: until then its pid, the group's id,
  // cannot be taken by another process.
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (w.whole) {
    if (w.report == "ok") return;
    if (w.report.starts_with("error:")) throw LoadError(w.report.substr(6));
  }
  if (!w.ended)
    throw LoadError(fmt::format("{}: opening it did not finish within {} s: a static constructor or describe() blocks "
                                "($EXPR_PLUGIN_LOAD_TIMEOUT sets the limit)",
                                file.string(), static_cast<double>(timeout.count()) / 1000));
  if (WIFSIGNALED(status))
    throw LoadError(fmt::format("{}: opening it killed the process with signal {} ({}): a static constructor or describe() crashed; "
                                "expr opened it in a child process, so only that one died",
                                file.string(), WTERMSIG(status), ::strsignal(WTERMSIG(status))));
  throw LoadError(fmt::format("{}: opening it ended the process with exit code {}: a static constructor or describe() called exit; "
                              "expr opened it in a child process, so only that one ended",
                              file.string(), WIFEXITED(status) ? WEXITSTATUS(status) : -1));
}

}  // namespace expr::loader
