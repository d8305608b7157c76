// The context keeper's process: forked, its CUDA context made, then idle until killed.
#include "runner/context_keeper.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "device/cuda.hpp"
#include "runner/worker.hpp"

namespace expr::runner {

ContextKeeper::ContextKeeper(int gpu) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Out of the terminal's process group (Ctrl-C is the parent's to handle), gone with the parent,
    // holding none of its files (a worker's pipe held open here would never report its end).
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);
    ::close_range(0, ~0U, 0);
    const int null = ::open("/dev/null", O_RDWR);  // 0, 1 and 2: whatever CUDA prints goes nowhere
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (gpu >= 0) pin_to_gpu(gpu);
    try {
      if (cuda::shared_by_processes(0)) cuda::select(0);
    } catch (...) {
      // No context to hold: the workers find out why for themselves. Idle all the same, as with one.
    }
    for (;;) ::pause();
  }
  pid_ = pid;  // -1 when fork failed: the run goes on without
}

ContextKeeper::~ContextKeeper() {
  if (pid_ >= 0) kill_and_reap(pid_);
}

}  // namespace expr::runner
