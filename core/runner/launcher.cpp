// The launcher process: a request is a description of the job and the worker's three pipe ends
// (SCM_RIGHTS over a SOCK_SEQPACKET pair); the answer is the worker's pid, or minus an errno.
#include "runner/launcher.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "util/log.hpp"

namespace expr::runner {

namespace {

constexpr int launcher_socket = 3;  // where the launcher keeps its end: every other file it closes

constexpr int ends_count = 3;  // WorkerEnds: messages, output, commands

void close_ends(const WorkerEnds& ends) {
  for (const int fd : {ends.messages, ends.output, ends.commands})
    if (fd >= 0) ::close(fd);
}

// One request: its text and the worker's pipe ends it carries. False once the parent is gone.
bool receive(std::string& text, WorkerEnds& ends) {
  char buffer[65536];
  iovec io{buffer, sizeof buffer};
  alignas(cmsghdr) char control[CMSG_SPACE(ends_count * sizeof(int))];
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(launcher_socket, &message, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return false;
  text.assign(buffer, static_cast<std::size_t>(n));
  ends = {};
  if (const cmsghdr* c = CMSG_FIRSTHDR(&message);
      c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(ends_count * sizeof(int))) {
    int fds[ends_count];
    std::memcpy(fds, CMSG_DATA(c), sizeof fds);
    ends = {fds[0], fds[1], fds[2]};
  }
  return true;
}

// Forks the worker through a child that exits at once, so that the worker becomes the parent's
// child; returns its pid once that has happened (the child reaped), or minus an errno.
pid_t fork_worker(pid_t parent, const sigset_t& mask, const WorkerEnds& ends, const std::optional<std::uint64_t>& memory_limit,
                  const std::function<void(Channel&)>& job) {
  int told[2];  // the middle child writes the worker's pid here
  if (::pipe2(told, O_CLOEXEC) != 0) return -errno;
  const pid_t middle = ::fork();
  if (middle == 0) {
    const pid_t self = ::getpid();
    const pid_t worker = ::fork();
    if (worker == 0) {
      // A worker must not start before it belongs to the parent: the parent waits for it, and the
      // death signal it asks for (become_worker) follows whoever its parent is when it asks.
      for (pid_t above; (above = ::getppid()) != parent;) {
        // Only the parent's death ends the worker here: another parent seen while the parent lives
        // (once in a 10,000-point sweep, its cause not found) is waited out.
        if (above != self && ::kill(parent, 0) != 0) ::_exit(1);
        ::sched_yield();
      }
      ::close(told[0]);
      ::close(told[1]);
      ::close(launcher_socket);
      run_worker(parent, mask, ends, memory_limit, job);
    }
    if (worker > 0) ::setpgid(worker, worker);  // before the parent hears of it, so its group exists to be signalled
    const pid_t said = worker > 0 ? worker : -errno;
    [[maybe_unused]] const auto n = ::write(told[1], &said, sizeof said);
    ::_exit(0);
  }
  const int fork_error = errno;
  ::close(told[1]);
  pid_t said = -EIO;  // a middle child that died before telling
  if (middle < 0) {
    said = -fork_error;
  } else {
    while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (::read(told[0], &said, sizeof said) != static_cast<ssize_t>(sizeof said)) said = -EIO;
  }
  ::close(told[0]);
  return said;
}

[[noreturn]] void serve(pid_t parent, const sigset_t& mask, const Launcher::Jobs& jobs) {
  for (;;) {
    std::string text;
    WorkerEnds ends;
    if (!receive(text, ends)) ::_exit(0);
    pid_t answer = -EINVAL;  // a request the launcher cannot read
    if (ends.messages >= 0) {
      try {
        const auto request = nlohmann::json::parse(text);
        std::optional<std::uint64_t> memory_limit;
        if (!request.at("memory_limit").is_null()) memory_limit = request.at("memory_limit").get<std::uint64_t>();
        answer = fork_worker(parent, mask, ends, memory_limit, jobs(request.at("job")));
      } catch (const std::exception&) {
      }
    }
    close_ends(ends);
    while (::send(launcher_socket, &answer, sizeof answer, MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace

Launcher::Launcher(Jobs jobs) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return;
  // The parent's SIGINT and SIGTERM handlers must not run in the launcher, nor in a worker before
  // it has its own: both stay blocked there, and each worker restores `mask`.
  const auto mask = block_stop_signals();
  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Out of the terminal's process group (Ctrl-C is the parent's to handle), gone with the
    // parent, holding none of its files but its standard streams: a worker's pipe or the run's
    // journal held open here would outlive what they belong to.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);
    if (::dup2(pair[1], launcher_socket) < 0) ::_exit(1);
    ::close_range(launcher_socket + 1, ~0U, 0);
    // The logger still holds the parent's expr.log by a descriptor just closed, and would close that
    // number again when a worker takes its own logger (log::become_worker): by then the number is
    // a pipe of the worker's. It lets go of the file now, while the number is free.
    log::become_worker({});
    serve(parent, mask, jobs);
  }
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  ::close(pair[1]);
  if (pid < 0) {
    ::close(pair[0]);
    return;
  }
  pid_ = pid;
  socket_ = pair[0];
  ::prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper_);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

Launcher::~Launcher() { end(); }

void Launcher::end() {
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
  if (pid_ <= 0) return;
  kill_and_reap(pid_);
  pid_ = -1;
  ::prctl(PR_SET_CHILD_SUBREAPER, was_subreaper_);
}

pid_t Launcher::spawn(const nlohmann::json& description, const WorkerEnds& ends, const std::optional<std::uint64_t>& memory_limit) {
  if (!running()) throw std::runtime_error("the launcher is gone");
  const auto text = nlohmann::json{{"job", description}, {"memory_limit", memory_limit ? nlohmann::json(*memory_limit) : nlohmann::json(nullptr)}}.dump();
  iovec io{const_cast<char*>(text.data()), text.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(ends_count * sizeof(int))]{};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&message);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(ends_count * sizeof(int));
  const int fds[ends_count] = {ends.messages, ends.output, ends.commands};
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t n;
  while ((n = ::sendmsg(socket_, &message, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  pid_t answer = 0;
  if (n == static_cast<ssize_t>(text.size()))
    while ((n = ::recv(socket_, &answer, sizeof answer, 0)) < 0 && errno == EINTR) {
    }
  if (n != static_cast<ssize_t>(sizeof answer)) {
    // The launcher died (or was killed): the run goes on with workers forked by the parent.
    end();
    throw std::runtime_error("the launcher process is gone");
  }
  if (answer < 0) throw std::runtime_error(std::string("cannot start a worker process: ") + std::strerror(-answer));
  return answer;
}

}  // namespace expr::runner
