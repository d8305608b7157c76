// Forking, watching and reaping worker processes.
#include "runner/worker.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "runner/launcher.hpp"
#include "runner/limits.hpp"
#include "trace/clock.hpp"
#include "util/log.hpp"
#include "util/units.hpp"

namespace expr::runner {

void Channel::send(const nlohmann::json& message) {
  // A string that is not UTF-8 (a plugin's log line, say) is replaced, not a reason to lose the message.
  const auto line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const std::lock_guard lock(mutex_);
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
    case How::stopped: return "was stopped when the run was interrupted";
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

volatile std::sig_atomic_t stop_asked = 0;
int commands_from_parent = -1;  // in a worker: the read end of the parent's lines

void ask_to_stop(int) { stop_asked = 1; }

// The parent is gone: the worker ends with its whole process group, whatever the plugin started
// included (unless that made itself a group of its own).
void parent_died(int) { ::kill(0, SIGKILL); }

void handle(int signal, void (*handler)(int)) {
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  action.sa_handler = handler;
  ::sigaction(signal, &action, nullptr);
}

// First thing in a new worker, with SIGINT and SIGTERM still blocked by the parent (so the
// parent's own handlers, inherited through fork, never run here); restores `mask` at the end.
void become_worker(pid_t parent, const sigset_t& mask) {
  ::setpgid(0, 0);  // its own process group, so a timeout or a stop also reaches anything it started
  handle(SIGTERM, ask_to_stop);
  handle(SIGINT, SIG_DFL);
  handle(SIGHUP, parent_died);
  ::prctl(PR_SET_PDEATHSIG, SIGHUP);
  if (::getppid() != parent) parent_died(0);  // the parent died before the line above
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
}

[[noreturn]] void child(const std::function<void(Channel&)>& job, const WorkerEnds& ends) {
  ::dup2(ends.output, STDOUT_FILENO);
  ::dup2(ends.output, STDERR_FILENO);
  ::close(ends.output);
  commands_from_parent = ends.commands;
  Channel channel(ends.messages);
  // The worker's own log lines go to its log file and up to the parent, which logs them by name.
  log::become_worker([&channel](log::Level level, std::string_view message) {
    channel.send({{"type", "log"}, {"level", log::to_string(level)}, {"message", message}});
  });
  try {
    job(channel);
  } catch (const std::exception& e) {
    channel.send({{"type", "error"}, {"message", e.what()}});
    std::fflush(nullptr);
    ::_exit(3);
  }
  std::fflush(nullptr);
  // Done: the streams and then the pipe closed now tell the parent at once, while the process
  // still unmaps its memory and its CUDA context on the way out (about 50 ms on the H200), which
  // the next worker's start then overlaps.
  ::close(STDOUT_FILENO);
  ::close(STDERR_FILENO);
  ::close(ends.messages);
  // _exit: static destructors of libraries the job loaded (CUDA, frameworks) are no business of ours.
  ::_exit(0);
}

// Kills what is left of a worker's process group, then reaps the worker. The worker is waited for
// first without reaping it: until it is reaped its pid, the group's id, cannot be taken by another
// process, so the kill reaches only what the worker started.
int kill_group_and_reap(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // What the worker started and left behind becomes this process's child while a launcher makes
  // it the subreaper: those of the group that are gone are reaped here, not left as zombies.
  while (::waitpid(-pid, nullptr, WNOHANG) > 0) {
  }
  return status;
}

}  // namespace

void run_worker(pid_t parent, const sigset_t& mask, const WorkerEnds& ends, const std::optional<std::uint64_t>& memory_limit,
                const std::function<void(Channel&)>& job) {
  become_worker(parent, mask);
  if (memory_limit) limit_memory(*memory_limit, ends.messages);
  child(job, ends);
}

std::string read_from_parent() {
  if (stop_requested()) return "";
  std::string line;
  for (char c;;) {
    const auto n = ::read(commands_from_parent, &c, 1);
    if (n < 0 && errno == EINTR) {
      if (stop_requested()) return "";
      continue;
    }
    if (n <= 0) throw std::runtime_error("the parent closed its line to this worker");
    if (c == '\n') return line;
    line += c;
  }
}

sigset_t block_stop_signals() {
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stop_signals, &previous);
  return previous;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

bool stop_requested() { return stop_asked != 0; }

void pin_to_gpu(int gpu) {
  std::string visible = std::to_string(gpu);
  if (const char* given = std::getenv("CUDA_VISIBLE_DEVICES"); given && *given) {
    std::vector<std::string> listed;
    std::stringstream list(given);
    for (std::string item; std::getline(list, item, ',');) listed.push_back(item);
    if (static_cast<std::size_t>(gpu) < listed.size()) visible = listed[static_cast<std::size_t>(gpu)];
  }
  ::setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
}

WorkerPool::~WorkerPool() {
  for (auto& [fd, w] : workers_) {
    ::kill(-w.pid, SIGKILL);
    ::close(fd);
    ::close(w.commands_fd);
    kill_group_and_reap(w.pid);
    for (const int f : {w.output_fd, w.log_fd})
      if (f >= 0) ::close(f);
  }
  reap_exiting(true);
}

void WorkerPool::reap_exiting(bool block) {
  for (auto it = exiting_.begin(); it != exiting_.end();) {
    siginfo_t info{};
    const int flags = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
    while (::waitid(P_PID, static_cast<id_t>(*it), &info, flags) < 0 && errno == EINTR) {
    }
    if (!block && info.si_pid == 0) {  // still tearing down
      ++it;
      continue;
    }
    kill_group_and_reap(*it);
    it = exiting_.erase(it);
  }
}

int WorkerPool::start(const std::function<void(Channel&)>& job, WorkerOptions options) {
  // Each pipe as {read end, write end}: messages and output go up, commands come down.
  int messages[2] = {-1, -1}, output[2] = {-1, -1}, commands[2] = {-1, -1};
  const auto close_all = [&] {
    for (const int fd : {messages[0], messages[1], output[0], output[1], commands[0], commands[1]})
      if (fd >= 0) ::close(fd);
  };
  // The parent's lines go down a socket, not a pipe: a send to a worker that has just died must
  // not raise SIGPIPE in the parent (MSG_NOSIGNAL).
  for (int* p : {messages, output, commands})
    if ((p == commands ? ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) : ::pipe2(p, O_CLOEXEC)) != 0) {
      const int error = errno;
      close_all();
      throw std::runtime_error(std::string("cannot create a worker's pipes: ") + std::strerror(error));
    }
  const WorkerEnds ends{messages[1], output[1], commands[0]};
  const auto spawned = trace::now();
  pid_t pid = -1;
  if (launcher_ && launcher_->running() && !options.description.is_null()) {
    try {
      pid = launcher_->spawn(options.description, ends, options.memory_limit);
    } catch (const std::exception& e) {
      if (launcher_->running()) {
        close_all();
        throw;
      }
      log::warn("{}: expr forks the run's workers itself from now on", e.what());
    }
  }
  if (pid < 0) {
    std::fflush(nullptr);
    const auto mask = block_stop_signals();
    const pid_t parent = ::getpid();
    pid = ::fork();
    if (pid == 0) {
      ::close(messages[0]);
      ::close(output[0]);
      ::close(commands[1]);
      run_worker(parent, mask, ends, options.memory_limit, job);
    }
    const int fork_error = errno;
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    if (pid < 0) {
      close_all();
      throw std::runtime_error(std::string("cannot start a worker process: ") + std::strerror(fork_error));
    }
    ::setpgid(pid, pid);
  }
  for (const int fd : {messages[1], output[1], commands[0]}) ::close(fd);
  Worker w;
  w.pid = pid;
  w.output_fd = output[0];
  w.commands_fd = commands[1];
  // Read without blocking: when the worker has ended, what it started may still hold the pipe.
  ::fcntl(w.output_fd, F_SETFL, ::fcntl(w.output_fd, F_GETFL) | O_NONBLOCK);
  workers_.emplace(messages[0], std::move(w));
  reassign(messages[0], std::move(options));
  workers_.at(messages[0]).spawned = spawned;
  return messages[0];
}

void WorkerPool::tell(int worker, std::string_view line) {
  const auto it = workers_.find(worker);
  if (it == workers_.end()) return;
  const auto text = std::string(line) + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::send(it->second.commands_fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the worker is gone: its end comes through wait()
    done += static_cast<std::size_t>(n);
  }
}

void WorkerPool::reassign(int worker, WorkerOptions options) {
  auto& w = workers_.at(worker);
  if (w.log_fd >= 0) ::close(w.log_fd);
  w.log_fd = ::open(options.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  w.logged = w.dropped = 0;
  w.spawned = trace::now();
  w.options = std::move(options);
  restart_timeout(worker, w.options.timeout_seconds);
}

void WorkerPool::restart_timeout(int worker, double seconds) {
  workers_.at(worker).deadline = seconds > 0 ? std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                                  std::chrono::duration<double>(seconds))
                                             : std::chrono::steady_clock::time_point::max();
}

void WorkerPool::kill(int worker) {
  auto& w = workers_.at(worker);
  w.stopping = true;
  ::kill(-w.pid, SIGKILL);
}

void WorkerPool::stop_all(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (auto& [fd, w] : workers_) {
    if (w.stopping) continue;
    w.stopping = true;
    w.deadline = std::min(w.deadline, deadline);
    ::kill(-w.pid, SIGTERM);
  }
}

void WorkerPool::kill_all() {
  for (const auto& [fd, w] : workers_) kill(fd);
}

void WorkerPool::wait(int wake_fd) {
  reap_exiting(false);
  if (workers_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  // A child past its deadline is stopped before anything else is read.
  for (auto it = workers_.begin(); it != workers_.end();) {
    const auto fd = (it++)->first;
    if (workers_.at(fd).deadline <= now) finish(fd, true);
  }
  if (workers_.empty()) return;
  auto next_deadline = std::chrono::steady_clock::time_point::max();
  std::vector<pollfd> fds;
  for (const auto& [fd, w] : workers_) {
    fds.push_back({fd, POLLIN, 0});
    next_deadline = std::min(next_deadline, w.deadline);
  }
  const auto messages = fds.size();
  for (const auto& [fd, w] : workers_) fds.push_back({w.output_fd, POLLIN, 0});  // -1 (ignored by poll) once closed
  if (wake_fd >= 0) fds.push_back({wake_fd, POLLIN, 0});
  int wait_ms = -1;
  if (next_deadline != std::chrono::steady_clock::time_point::max())
    wait_ms = static_cast<int>(std::clamp<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - now).count() + 1, 0, 1000));
  const int ready = ::poll(fds.data(), fds.size(), wait_ms);
  if (ready <= 0) return;  // a timeout came due, or a signal: the next call looks again
  // Children are reaped, and their on_exit run (which may start the next worker, on a reused fd),
  // only once every pipe that poll reported has been read.
  auto output = workers_.begin();
  for (std::size_t i = messages; i < messages + workers_.size(); ++i, ++output)
    if (fds[i].revents != 0 && !copy_output(output->second)) {
      ::close(output->second.output_fd);
      output->second.output_fd = -1;
    }
  std::vector<int> ended;
  for (std::size_t i = 0; i < messages; ++i)
    if (fds[i].revents != 0 && !read_from(fds[i].fd)) ended.push_back(fds[i].fd);
  for (const int fd : ended) finish(fd, false);
}

bool WorkerPool::copy_output(Worker& w) {
  char buffer[65536];
  // At most 1 MiB a call, so that a worker printing as fast as it can does not keep the parent
  // from the other workers and their timeouts.
  for (int reads = 0; reads < 16; ++reads) {
    const auto n = ::read(w.output_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    if (n <= 0) return false;
    auto keep = static_cast<std::uint64_t>(n);
    if (w.logged + keep > max_worker_output) keep = max_worker_output - w.logged;
    std::uint64_t written = 0;
    while (w.log_fd >= 0 && written < keep) {
      const auto m = ::write(w.log_fd, buffer + written, keep - written);
      if (m < 0 && errno == EINTR) continue;
      if (m <= 0) break;  // a full disk: the rest is dropped too, and the run goes on
      written += static_cast<std::uint64_t>(m);
    }
    w.logged += written;
    w.dropped += static_cast<std::uint64_t>(n) - written;
  }
  return true;
}

void WorkerPool::close_output(Worker& w) {
  if (w.output_fd >= 0) {
    copy_output(w);  // what is left in the pipe (its buffer, a read or two)
    ::close(w.output_fd);
    w.output_fd = -1;
  }
  if (w.log_fd >= 0) {
    if (w.dropped > 0) {
      const auto marker = fmt::format("\n[expr: {} more bytes of this worker's output were dropped: its log keeps the first {}]\n", w.dropped,
                                      util::format_bytes(max_worker_output));
      [[maybe_unused]] const auto n = ::write(w.log_fd, marker.data(), marker.size());  // a full disk loses only the marker
    }
    ::close(w.log_fd);
    w.log_fd = -1;
  }
}

bool WorkerPool::read_from(int fd) {
  auto& w = workers_.at(fd);
  char buffer[65536];
  const auto n = ::read(fd, buffer, sizeof buffer);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  w.pending.append(buffer, static_cast<std::size_t>(n));
  for (std::size_t nl; (nl = w.pending.find('\n')) != std::string::npos;) {
    auto message = nlohmann::json::parse(std::string_view(w.pending).substr(0, nl), nullptr, false);
    w.pending.erase(0, nl + 1);
    if (message.is_discarded()) continue;
    const auto type = message.value("type", "");
    if (type == "result") w.result = std::move(message);
    else if (type == "log")
      log::write(log::level_from(message.value("level", "")).value_or(log::Level::info),
                 fmt::format("{}: {}", w.options.name, message.value("message", "")));
    else if (w.options.on_message) w.options.on_message(message);
  }
  return true;
}

void WorkerPool::finish(int fd, bool timed_out) {
  auto node = workers_.extract(fd);
  auto& w = node.mapped();
  if (timed_out) ::kill(-w.pid, SIGKILL);
  ::close(fd);
  ::close(w.commands_fd);
  WorkerExit exit;
  exit.spawned = w.spawned;
  exit.result = std::move(w.result);
  // A worker that sent its result and closed its pipe is done: its output ended as it exited (its
  // standard streams close before the pipe does), and its process is reaped later.
  if (exit.result && !timed_out && !w.stopping) {
    close_output(w);
    exiting_.push_back(w.pid);
    exit.ended = trace::now();
    if (w.options.on_exit) w.options.on_exit(std::move(exit));
    return;
  }
  // Nothing the worker started outlives it.
  const int status = kill_group_and_reap(w.pid);
  close_output(w);  // the writers are gone
  exit.ended = trace::now();
  if (w.stopping && !exit.result) {
    exit.how = WorkerExit::How::stopped;
  } else if (timed_out) {
    exit.how = WorkerExit::How::timed_out;
  } else if (WIFSIGNALED(status)) {
    exit.how = WorkerExit::How::crashed;
    exit.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    exit.exit_code = WEXITSTATUS(status);
    exit.how = exit.result ? WorkerExit::How::finished : WorkerExit::How::crashed;
  }
  if (w.options.on_exit) w.options.on_exit(std::move(exit));
}

WorkerExit run_in_worker(const std::function<void(Channel&)>& job, WorkerOptions options) {
  WorkerExit out;
  options.on_exit = [&](WorkerExit e) { out = std::move(e); };
  WorkerPool pool;
  pool.start(job, std::move(options));
  while (pool.running() > 0) pool.wait();
  return out;
}

}  // namespace expr::runner
