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

// Each kernel's theoretical occupancy, parallel to trace.kernels; empty where the trace lacks the
// kernel's device properties.
std::vector<std::optional<Occupancy>> kernel_occupancies(const trace::Trace& trace);

}  // namespace expr::analysis
