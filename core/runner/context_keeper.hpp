// A process that holds a CUDA context on a GPU while a run lasts and does nothing with it. Every
// worker creates a context of its own, and on the H200 (persistence mode on) that took about 235 ms
// with no other context on the device and about 140 ms beside one held elsewhere
// (bench/context_overlap.cu), so a sweep's hundreds of workers start sooner. An idle context takes
// no time from one that works: the same benchmark times a worker's device and host time with and
// without it (docs/timing.md).
#pragma once

#include <sys/types.h>

namespace expr::runner {

class ContextKeeper {
 public:
  // `gpu`: the GPU as pin_to_gpu takes it; -1: device 0 with every GPU visible, as a worker of a
  // serial run sees it. Nothing is held on a GPU in an exclusive compute mode, where the context
  // would keep every worker off it.
  explicit ContextKeeper(int gpu);
  ~ContextKeeper();  // kills the process and reaps it
  ContextKeeper(const ContextKeeper&) = delete;
  ContextKeeper& operator=(const ContextKeeper&) = delete;

 private:
  pid_t pid_ = -1;  // -1: none could be started
};

}  // namespace expr::runner
