#include "runner/worker.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>

#include "runner/limits.hpp"

namespace expr::runner {

void Channel::send(const nlohmann::json& message) {
  // A string that is not UTF-8 (a plugin's log line, say) is replaced, not a reason to lose the message.
  const auto line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const auto n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone; nothing left to tell
    done += static_cast<std::size_t>(n);
  }
}

std::string WorkerExit::describe() const {
  switch (how) {
    case How::timed_out: return "was stopped after its timeout";
    case How::crashed:
      if (signal) return std::string("was killed by SIG") + sigabbrev_np(signal) + " (" + strsignal(signal) + ")";
      return "exited with status " + std::to_string(exit_code) + " before reporting a result";
    case How::finished: return "finished";
  }
  return "?";
}

std::string tail(const std::filesystem::path& file, std::size_t lines) {
  std::ifstream in(file);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += (out.empty() ? "" : "\n") + l;
  return out;
}

namespace {

[[noreturn]] void child(const std::function<void(Channel&)>& job, int write_fd, const std::filesystem::path& log_file) {
  ::setpgid(0, 0);  // its own process group, so a timeout also stops anything it started
  const int log = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log >= 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::close(log);
  }
  Channel channel(write_fd);
  try {
    job(channel);
  } catch (const std::exception& e) {
    channel.send({{"type", "error"}, {"message", e.what()}});
    std::fflush(nullptr);
    ::_exit(3);
  }
  std::fflush(nullptr);
  // _exit: static destructors of libraries the job loaded (CUDA, frameworks) are no business of ours.
  ::_exit(0);
}

}  // namespace

WorkerExit run_in_worker(const std::function<void(Channel&)>& job, const WorkerOptions& options) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start a worker process: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    if (options.memory_limit) limit_memory(*options.memory_limit, fds[1]);
    child(job, fds[1], options.log_file);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);

  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(options.timeout_seconds);
  WorkerExit exit;
  std::string pending;
  char buffer[65536];
  bool open = true;
  while (open) {
    int wait_ms = -1;
    if (options.timeout_seconds > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) {
        ::kill(-pid, SIGKILL);
        exit.how = WorkerExit::How::timed_out;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const auto n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
      break;
    }
    pending.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      const auto line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      auto message = nlohmann::json::parse(line, nullptr, false);
      if (message.is_discarded()) continue;
      if (message.value("type", "") == "result") exit.result = std::move(message);
      else if (options.on_message) options.on_message(message);
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exit.how == WorkerExit::How::timed_out) return exit;
  if (WIFSIGNALED(status)) {
    exit.how = WorkerExit::How::crashed;
    exit.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    exit.exit_code = WEXITSTATUS(status);
    exit.how = exit.result ? WorkerExit::How::finished : WorkerExit::How::crashed;
  }
  return exit;
}

}  // namespace expr::runner
