// The parent's SIGINT and SIGTERM handlers: a count, the first signal, and a byte down a pipe to
// wake the poll loop.
#include "runner/interrupt.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace expr::runner {

namespace {

std::atomic<int> received{0};
std::atomic<int> first{0};
int wake_pipe[2] = {-1, -1};
struct sigaction previous_int {}, previous_term {};

void reset_to_default() {
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  action.sa_handler = SIG_DFL;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

void on_signal(int signal) {
  const int saved_errno = errno;
  int none = 0;
  first.compare_exchange_strong(none, signal);
  if (received.fetch_add(1) + 1 >= 2) reset_to_default();
  [[maybe_unused]] const auto written = ::write(wake_pipe[1], "!", 1);
  errno = saved_errno;
}

}  // namespace

Interrupts::Interrupts() {
  if (::pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  received = 0;
  first = 0;
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  action.sa_handler = on_signal;  // no SA_RESTART: a blocking call returns, and the loop looks
  ::sigaction(SIGINT, &action, &previous_int);
  ::sigaction(SIGTERM, &action, &previous_term);
}

Interrupts::~Interrupts() {
  ::sigaction(SIGINT, &previous_int, nullptr);
  ::sigaction(SIGTERM, &previous_term, nullptr);
  ::close(wake_pipe[0]);
  ::close(wake_pipe[1]);
  wake_pipe[0] = wake_pipe[1] = -1;
}

int Interrupts::count() const { return received; }
int Interrupts::first_signal() const { return first; }

std::string Interrupts::name() const {
  const int signal = first;
  return signal == 0 ? "" : std::string("SIG") + sigabbrev_np(signal);
}

int Interrupts::wake_fd() const { return wake_pipe[0]; }

void Interrupts::drain() const {
  char buffer[64];
  while (::read(wake_pipe[0], buffer, sizeof buffer) > 0) {
  }
}

}  // namespace expr::runner
