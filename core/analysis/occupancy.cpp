#include "analysis/occupancy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>

namespace expr::analysis {

std::string_view to_string(Limiter limiter) {
  switch (limiter) {
    case Limiter::threads: return "threads";
    case Limiter::registers: return "registers";
    case Limiter::shared_memory: return "shared_memory";
    case Limiter::blocks: return "blocks";
  }
  return "unknown";
}

namespace {

// What cudaDeviceProp does not say about a multiprocessor. Sources: the CUDA C++ Programming Guide,
// "Compute Capabilities" (255 registers per thread, 1024 threads per block, four warp schedulers
// per SM from Volta on); NVIDIA's occupancy calculator spreadsheet and its header form
// cuda_occupancy.h (cudaOccRegAllocationGranularity: 256, cudaOccSubPartitionsPerMultiprocessor: 4,
// cudaOccSMemAllocationGranularity: 256 bytes on 7.x, 128 from 8.0 on).
struct Architecture {
  int major, minor;
  int register_unit;   // registers are given to a warp in multiples of this
  int sub_partitions;  // the register file is split evenly between them, one per scheduler
  int shared_unit;     // bytes; shared memory is given to a block in multiples of this
  int max_registers_per_thread;
  int max_threads_per_block;
};

constexpr std::array<Architecture, 8> architectures{{
    {7, 0, 256, 4, 256, 255, 1024},   // Volta (V100)
    {7, 5, 256, 4, 256, 255, 1024},   // Turing (T4)
    {8, 0, 256, 4, 128, 255, 1024},   // Ampere (A100)
    {8, 6, 256, 4, 128, 255, 1024},   // Ampere (RTX 30, A40)
    {8, 9, 256, 4, 128, 255, 1024},   // Ada (L4, L40, RTX 40)
    {9, 0, 256, 4, 128, 255, 1024},   // Hopper (H100, H200)
    {10, 0, 256, 4, 128, 255, 1024},  // Blackwell (B200)
    {12, 0, 256, 4, 128, 255, 1024},  // Blackwell (RTX 50)
}};

constexpr int version(int major, int minor) { return major * 10 + minor; }

// The entry for this compute capability, or else the newest one before it (the same major first):
// these constants have not changed between neighbouring architectures, so it is the best guess.
const Architecture& architecture(int major, int minor, std::string& note) {
  const int wanted = version(major, minor);
  const Architecture* best = &architectures.front();
  for (const auto& a : architectures)
    if (version(a.major, a.minor) <= wanted) best = &a;
  if (version(best->major, best->minor) != wanted)
    note = fmt::format("compute capability {}.{} is not in the table; using the constants of {}.{}", major, minor,
                       best->major, best->minor);
  return *best;
}

int round_up(std::int64_t value, int unit) { return static_cast<int>((value + unit - 1) / unit * unit); }

// Blocks one resource allows on a multiprocessor; a reason when it allows none.
struct Limit {
  int blocks = INT_MAX;
  std::string why_none;
};

Limit limit_by_threads(std::int64_t threads, int warps_per_block, int max_warps, const Architecture& arch) {
  if (threads > arch.max_threads_per_block)
    return {0, fmt::format("a block of {} threads exceeds the limit of {}", threads, arch.max_threads_per_block)};
  return {max_warps / warps_per_block, {}};
}

// Registers are allocated per warp, rounded up to the allocation unit, and each warp's registers
// come from the sub-partition of the scheduler it runs on: warps fit per sub-partition.
Limit limit_by_registers(const trace::Footprint& launch, int warps_per_block, const trace::DeviceProperties& device,
                         const Architecture& arch) {
  const auto per_thread = static_cast<int>(launch.registers_per_thread);
  if (per_thread == 0) return {};
  if (per_thread > arch.max_registers_per_thread)
    return {0,
            fmt::format("{} registers per thread exceed the limit of {}", per_thread, arch.max_registers_per_thread)};
  const int per_warp = round_up(std::int64_t{per_thread} * device.warp_size, arch.register_unit);
  // The hardware checks the per-block limit as if the block's warps were spread evenly over all
  // sub-partitions, so it counts warps rounded up to a multiple of them.
  const std::int64_t per_block = std::int64_t{per_warp} * round_up(warps_per_block, arch.sub_partitions);
  if (per_block > device.max_registers_per_block)
    return {0, fmt::format("a block needs {} registers, more than the {} one block may have", per_block,
                           device.max_registers_per_block)};
  const int warps_per_sub_partition = device.registers_per_sm / arch.sub_partitions / per_warp;
  return {warps_per_sub_partition * arch.sub_partitions / warps_per_block, {}};
}

// A block holds its static and dynamic shared memory plus what the system reserves per block,
// rounded up to the allocation unit. Without a carveout preference the whole shared capacity of
// the SM counts (what the occupancy API assumes).
Limit limit_by_shared(const trace::Footprint& launch, const trace::DeviceProperties& device, const Architecture& arch) {
  const int per_block =
      round_up(std::int64_t{launch.shared_per_block()} + device.reserved_shared_per_block, arch.shared_unit);
  if (per_block == 0) return {};
  const int most = device.shared_per_block_optin + device.reserved_shared_per_block;
  if (per_block > most)
    return {0, fmt::format("a block needs {} bytes of shared memory, more than the {} one block may have", per_block,
                           most)};
  return {device.shared_per_sm / per_block, {}};
}

void add_note(std::string& note, std::string_view more) {
  if (more.empty()) return;
  if (!note.empty()) note += "; ";
  note += more;
}

// The shared memory the driver actually configured for this launch may hold fewer blocks than the
// theoretical figure assumes; say so, since it explains a lower achieved occupancy.
void note_carveout(const trace::Footprint& launch, const trace::DeviceProperties& device, const Architecture& arch,
                   Occupancy& o) {
  if (launch.shared_executed == 0 || o.blocks_per_sm == 0) return;
  const int per_block =
      round_up(std::int64_t{launch.shared_per_block()} + device.reserved_shared_per_block, arch.shared_unit);
  if (per_block == 0) return;
  const auto fit = static_cast<int>(launch.shared_executed / static_cast<std::uint32_t>(per_block));
  if (fit < o.blocks_per_sm)
    add_note(o.note, fmt::format("the driver configured {} bytes of shared memory per SM for this launch, which "
                                 "hold only {} blocks",
                                 launch.shared_executed, fit));
}

}  // namespace

Occupancy theoretical_occupancy(const trace::Footprint& launch, const trace::DeviceProperties& device) {
  Occupancy o;
  if (device.warp_size <= 0 || device.max_threads_per_sm <= 0 || device.registers_per_sm <= 0 ||
      device.max_blocks_per_sm <= 0) {
    o.note = "the device properties are missing";
    return o;
  }
  o.max_warps_per_sm = device.max_threads_per_sm / device.warp_size;
  const auto threads = static_cast<std::int64_t>(launch.block.volume());
  if (threads == 0) {
    o.note = "the block has no threads";
    return o;
  }
  std::string arch_note;
  const auto& arch = architecture(device.major, device.minor, arch_note);
  const auto warps_per_block = static_cast<int>((threads + device.warp_size - 1) / device.warp_size);

  // In Limiter order, so that on a tie the first one is named: the block's shape (threads) before
  // the per-kernel resources, and the block count last, since it binds only when nothing else does.
  const std::array<Limit, 4> limits{
      limit_by_threads(threads, warps_per_block, o.max_warps_per_sm, arch),
      limit_by_registers(launch, warps_per_block, device, arch),
      limit_by_shared(launch, device, arch),
      Limit{device.max_blocks_per_sm, {}},
  };
  const auto binding = std::min_element(limits.begin(), limits.end(),
                                        [](const Limit& a, const Limit& b) { return a.blocks < b.blocks; });
  o.limiter = static_cast<Limiter>(binding - limits.begin());
  o.blocks_per_sm = binding->blocks;
  o.warps_per_sm = o.blocks_per_sm * warps_per_block;
  o.fraction = static_cast<double>(o.warps_per_sm) / o.max_warps_per_sm;

  add_note(o.note, binding->why_none);
  if (launch.cluster.volume() > 1)
    add_note(o.note, fmt::format("a cluster launch ({} blocks per cluster) is not modelled: whole clusters must fit "
                                 "in a GPC, which can lower occupancy further",
                                 launch.cluster.volume()));
  note_carveout(launch, device, arch, o);
  add_note(o.note, arch_note);
  return o;
}

KinetoEstimate kineto_estimate(const trace::Footprint& launch, const trace::DeviceProperties& device, const Occupancy& theoretical) {
  KinetoEstimate e;
  if (device.multiprocessors <= 0 || device.max_threads_per_sm <= 0) return e;
  const auto threads = static_cast<double>(launch.block.volume());
  e.blocks_per_sm = static_cast<double>(launch.grid.volume()) / device.multiprocessors;
  e.warps_per_sm = e.blocks_per_sm * threads / 32;  // Kineto divides by 32 whatever the device
  const double active = std::min(static_cast<double>(theoretical.blocks_per_sm), e.blocks_per_sm);
  e.achieved_occupancy_percent = static_cast<int>(std::lround(active * threads / device.max_threads_per_sm * 100));
  return e;
}

std::vector<std::optional<KernelOccupancy>> kernel_occupancies(const trace::Trace& trace) {
  std::vector<std::optional<KernelOccupancy>> out;
  out.reserve(trace.kernels.size());
  for (const auto& k : trace.kernels)
    if (const auto* d = trace.device(k.device)) {
      auto theoretical = theoretical_occupancy(k.footprint, *d);
      const auto kineto = kineto_estimate(k.footprint, *d, theoretical);
      out.push_back(KernelOccupancy{std::move(theoretical), kineto});
    } else {
      out.emplace_back();
    }
  return out;
}

}  // namespace expr::analysis
