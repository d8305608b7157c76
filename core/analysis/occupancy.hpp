// Theoretical occupancy: how many blocks of a launch the hardware keeps resident on one
// multiprocessor, and which resource stops it from keeping more.
//
// Pure arithmetic on the launch footprint and the recorded device properties (no CUDA calls), so it
// runs in CI and when a saved trace is replayed. It agrees with the CUDA occupancy API
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor, without a shared memory carveout preference);
// tests/unit/occupancy_test.cpp holds it against NVIDIA's header calculator, cuda_occupancy.h.
#pragma once

#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "trace/trace.hpp"

namespace expr::analysis {

// What bounds the blocks per multiprocessor. When several bound it equally, the first in this order
// is named (see occupancy.cpp).
enum class Limiter { threads, registers, shared_memory, blocks };
std::string_view to_string(Limiter limiter);  // "threads", "registers", "shared_memory", "blocks"

struct Occupancy {
  int blocks_per_sm = 0;  // resident blocks per multiprocessor (0: the launch cannot fit)
  int warps_per_sm = 0;   // active warps per multiprocessor
  int max_warps_per_sm = 0;
  double fraction = 0;  // warps_per_sm / max_warps_per_sm
  Limiter limiter = Limiter::threads;
  std::string note;  // why it cannot fit, what is not modelled (clusters), ...; empty when nothing to say
};

Occupancy theoretical_occupancy(const trace::Footprint& launch, const trace::DeviceProperties& device);

// The PyTorch profiler's (Kineto's) estimates for one launch, under its names and with its
// meanings: the grid's blocks spread over the multiprocessors, not the resident blocks above.
struct KinetoEstimate {
  double blocks_per_sm = 0;  // "blocks per SM": grid blocks / multiprocessors
  double warps_per_sm = 0;   // "warps per SM": blocks_per_sm * threads per block / 32
  // "est. achieved occupancy %": min(resident blocks per SM, blocks_per_sm) * threads per block /
  // max threads per SM, in percent, rounded to a whole number.
  int achieved_occupancy_percent = 0;
};
KinetoEstimate kineto_estimate(const trace::Footprint& launch, const trace::DeviceProperties& device, const Occupancy& theoretical);

struct KernelOccupancy {
  Occupancy theoretical;
  KinetoEstimate kineto;
};
// Each kernel's occupancy figures, parallel to trace.kernels; empty where the trace lacks the
// kernel's device properties.
std::vector<std::optional<KernelOccupancy>> kernel_occupancies(const trace::Trace& trace);

}  // namespace expr::analysis
