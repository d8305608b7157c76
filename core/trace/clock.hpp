// The one clock of a trace. CUPTI is told to stamp its records with it too (cupti/collector.cpp),
// so host ranges and device records line up without conversion.
#pragma once

#include <time.h>

#include "trace/trace.hpp"

namespace expr::trace {

inline Ns now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Ns>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// What to add to now() to get Unix time in ns, now: a trace records it so that its exports can
// give their times on the Unix epoch.
Ns unix_offset();

std::uint32_t current_thread();  // the kernel's id for the calling thread

}  // namespace expr::trace
