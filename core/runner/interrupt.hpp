// Ctrl-C (SIGINT) and SIGTERM while `expr run` runs a series. The handlers only count the signals
// and wake the run's poll loop (series_runner.cpp), which acts on them: after the first, no
// experiment starts, the running workers are asked to stop and are killed if they have not within
// a grace period, and every experiment that did not finish is recorded as interrupted; after the
// second, the workers are killed at once. From then on the signals have their default action, so a
// third ends expr itself at once (its workers die with it, and results.json keeps the state after
// the last experiment that finished).
#pragma once

#include <string>

namespace expr::runner {

class Interrupts {
 public:
  Interrupts();   // installs the handlers; one Interrupts at a time
  ~Interrupts();  // puts the previous handlers back
  Interrupts(const Interrupts&) = delete;
  Interrupts& operator=(const Interrupts&) = delete;

  int count() const;         // signals so far
  int first_signal() const;  // the number of the first one; 0 before any
  std::string name() const;  // "SIGINT"; empty before any
  // Readable after each signal, for poll(); drain() empties it.
  int wake_fd() const;
  void drain() const;
};

}  // namespace expr::runner
