// The blocking kernel behind QueueHold, and the host memory it watches. Compiled by nvcc in C++17
// (CMake 3.25 cannot ask it for C++20), so it includes nothing of the C++20 core.
#include "device/queue_hold.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace expr::cuda {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread spins on the host's flag; it sleeps between reads so the polling costs little of the
// bus, and a microsecond of lateness is far below what a held batch runs.
__global__ void hold_queue(const volatile unsigned* released, volatile unsigned* timed_out, unsigned long long timeout_ns) {
  const auto start = global_ns();
  while (*released == 0) {
    if (global_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(1000);
  }
}

}  // namespace

QueueHold::QueueHold() {
  void* p = nullptr;
  check(cudaHostAlloc(&p, 2 * sizeof(unsigned), cudaHostAllocMapped), "cudaHostAlloc");
  flags_ = static_cast<unsigned*>(p);
  flags_[0] = flags_[1] = 0;
}

QueueHold::~QueueHold() { cudaFreeHost(flags_); }

void QueueHold::hold(std::chrono::nanoseconds timeout) {
  __atomic_store_n(&flags_[0], 0u, __ATOMIC_RELEASE);
  __atomic_store_n(&flags_[1], 0u, __ATOMIC_RELEASE);
  hold_queue<<<1, 1, 0, cudaStreamLegacy>>>(flags_, flags_ + 1, static_cast<unsigned long long>(timeout.count()));
  check(cudaGetLastError(), "launching the kernel that holds the queue");
}

void QueueHold::release() { __atomic_store_n(&flags_[0], 1u, __ATOMIC_RELEASE); }

bool QueueHold::timed_out() const { return __atomic_load_n(&flags_[1], __ATOMIC_ACQUIRE) != 0; }

}  // namespace expr::cuda
