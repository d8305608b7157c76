// The occupancy calculator against NVIDIA's own: cuda_occupancy.h is the header form of the
// occupancy API, needs no GPU, and serves here only as the oracle.
#include "analysis/occupancy.hpp"

#include <cuda_occupancy.h>
#include <doctest/doctest.h>

#include <string>
#include <vector>

using expr::analysis::Limiter;
using expr::analysis::theoretical_occupancy;

namespace {

// cudaDeviceProp values of real boards (cudaGetDeviceProperties + cudaDevAttrReservedSharedMemoryPerBlock).
expr::trace::DeviceProperties device(int major, int minor, int sms, int threads_per_sm, int blocks_per_sm,
                                     int shared_per_sm, int shared_optin, int reserved) {
  expr::trace::DeviceProperties d;
  d.name = "sm_" + std::to_string(major) + std::to_string(minor);
  d.major = major;
  d.minor = minor;
  d.multiprocessors = sms;
  d.warp_size = 32;
  d.max_threads_per_sm = threads_per_sm;
  d.max_blocks_per_sm = blocks_per_sm;
  d.registers_per_sm = 65536;
  d.max_registers_per_block = 65536;
  d.shared_per_sm = shared_per_sm;
  d.shared_per_block_optin = shared_optin;
  d.reserved_shared_per_block = reserved;
  return d;
}

const auto h100 = device(9, 0, 132, 2048, 32, 233472, 232448, 1024);  // also H200
const auto a100 = device(8, 0, 108, 2048, 32, 167936, 166912, 1024);
const auto v100 = device(7, 0, 80, 2048, 32, 98304, 98304, 0);
const auto t4 = device(7, 5, 40, 1024, 16, 65536, 65536, 0);
const auto a40 = device(8, 6, 84, 1536, 16, 102400, 101376, 1024);
const auto l4 = device(8, 9, 58, 1536, 24, 102400, 101376, 1024);
const auto b200 = device(10, 0, 148, 2048, 32, 233472, 232448, 1024);
const auto rtx5090 = device(12, 0, 170, 1536, 24, 102400, 101376, 1024);

expr::trace::Footprint footprint(unsigned threads, unsigned registers, unsigned static_shared = 0,
                                 unsigned dynamic_shared = 0) {
  expr::trace::Footprint f;
  f.grid = {264, 1, 1};
  f.block = {threads, 1, 1};
  f.registers_per_thread = registers;
  f.static_shared = static_shared;
  f.dynamic_shared = dynamic_shared;
  return f;
}

struct Oracle {
  int blocks = 0;
  unsigned limiting = 0;  // cudaOccLimitingFactor bits
};

// What the occupancy API says for a kernel that opted in to exactly the dynamic shared memory it
// launches with, as cudaOccFuncAttributes(cudaFuncAttributes) would describe it.
Oracle oracle(const expr::trace::Footprint& f, const expr::trace::DeviceProperties& d) {
  cudaOccDeviceProp p;
  p.computeMajor = d.major;
  p.computeMinor = d.minor;
  p.maxThreadsPerBlock = 1024;
  p.maxThreadsPerMultiprocessor = d.max_threads_per_sm;
  p.regsPerBlock = d.max_registers_per_block;
  p.regsPerMultiprocessor = d.registers_per_sm;
  p.warpSize = d.warp_size;
  p.sharedMemPerBlock = 49152;
  p.sharedMemPerMultiprocessor = static_cast<size_t>(d.shared_per_sm);
  p.numSms = d.multiprocessors;
  p.sharedMemPerBlockOptin = static_cast<size_t>(d.shared_per_block_optin);
  p.reservedSharedMemPerBlock = static_cast<size_t>(d.reserved_shared_per_block);

  cudaOccFuncAttributes a;
  a.maxThreadsPerBlock = 1024;
  a.numRegs = static_cast<int>(f.registers_per_thread);
  a.sharedSizeBytes = f.static_shared;
  a.partitionedGCConfig = PARTITIONED_GC_OFF;
  a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  a.maxDynamicSharedSizeBytes = f.dynamic_shared;
  a.numBlockBarriers = 1;
  a.virtualResourceCount = 0;

  cudaOccDeviceState state;  // no cache or carveout preference
  cudaOccResult result{};
  const auto status = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &p, &a, &state,
                                                              static_cast<int>(f.block.volume()), f.dynamic_shared);
  if (status != CUDA_OCC_SUCCESS) return {-1, 0};  // shows up as a mismatch
  return {result.activeBlocksPerMultiprocessor, result.limitingFactors};
}

unsigned oracle_bit(Limiter limiter) {
  switch (limiter) {
    case Limiter::threads: return OCC_LIMIT_WARPS;
    case Limiter::registers: return OCC_LIMIT_REGISTERS;
    case Limiter::shared_memory: return OCC_LIMIT_SHARED_MEMORY;
    case Limiter::blocks: return OCC_LIMIT_BLOCKS;
  }
  return 0;
}

// Shared memory sizes from none to a little past what one block may have.
std::vector<unsigned> shared_sizes(const expr::trace::DeviceProperties& d) {
  std::vector<unsigned> sizes;
  const auto most = static_cast<unsigned>(d.shared_per_block_optin + 4096);
  for (unsigned s = 0; s <= most; s += 3 * 1024) {
    sizes.push_back(s);
    sizes.push_back(s + 100);  // not a multiple of the allocation unit
  }
  sizes.push_back(static_cast<unsigned>(d.shared_per_block_optin));  // exactly the most one block may have
  return sizes;
}

void compare_everywhere(const expr::trace::DeviceProperties& d) {
  std::vector<unsigned> block_sizes;
  for (unsigned t = 32; t <= 1024; t += 32) block_sizes.push_back(t);
  for (unsigned t : {1u, 33u, 100u, 250u, 1000u}) block_sizes.push_back(t);

  int compared = 0, mismatched = 0;
  std::string first_mismatch;
  for (unsigned threads : block_sizes)
    for (unsigned registers = 16; registers <= 255; ++registers)
      for (unsigned shared : shared_sizes(d)) {
        // Static shared memory is at most 48 KiB; the rest is dynamic.
        const unsigned static_shared = shared < 49152 ? shared / 2 : 49152 / 2;
        const auto f = footprint(threads, registers, static_shared, shared - static_shared);
        const auto ours = theoretical_occupancy(f, d);
        const auto theirs = oracle(f, d);
        ++compared;
        if (ours.blocks_per_sm != theirs.blocks || (theirs.limiting & oracle_bit(ours.limiter)) == 0) {
          if (mismatched++ == 0)
            first_mismatch = std::to_string(threads) + " threads, " + std::to_string(registers) + " registers, " +
                             std::to_string(shared) + " B shared: ours " + std::to_string(ours.blocks_per_sm) +
                             " blocks (" + std::string(to_string(ours.limiter)) + "), cuda_occupancy.h " +
                             std::to_string(theirs.blocks) + " (limiting bits " + std::to_string(theirs.limiting) + ")";
        }
      }
  INFO(d.name, ": ", compared, " footprints compared; first mismatch: ", first_mismatch);
  CHECK(compared > 100000);
  CHECK(mismatched == 0);
}

}  // namespace

TEST_CASE("occupancy agrees with cuda_occupancy.h on blocks per SM and the limiting resource") {
  SUBCASE("H100 / H200 (sm_90)") { compare_everywhere(h100); }
  SUBCASE("A100 (sm_80)") { compare_everywhere(a100); }
  SUBCASE("V100 (sm_70)") { compare_everywhere(v100); }
  SUBCASE("T4 (sm_75)") { compare_everywhere(t4); }
  SUBCASE("A40 (sm_86)") { compare_everywhere(a40); }
  SUBCASE("L4 (sm_89)") { compare_everywhere(l4); }
  SUBCASE("B200 (sm_100)") { compare_everywhere(b200); }
  SUBCASE("RTX 5090 (sm_120)") { compare_everywhere(rtx5090); }
}

TEST_CASE("occupancy reproduces the series' observations") {
  for (const auto* d : {&a100, &h100}) {
    CAPTURE(d->name);
    // FlashAttention-2 forward: 4 warps of 255 registers; 8160 registers a warp round up to 8192, so
    // a sub-partition's 16384 hold 2 warps, the SM 8, i.e. 2 blocks.
    const auto flash = theoretical_occupancy(footprint(128, 255, 0, 49152), *d);
    CHECK(flash.blocks_per_sm == 2);
    CHECK(flash.warps_per_sm == 8);
    CHECK(flash.max_warps_per_sm == 64);
    CHECK(flash.fraction == doctest::Approx(0.125));
    CHECK(flash.limiter == Limiter::registers);

    // The cuDNN kernel: 8 warps of 240 registers (7680 a warp): 2 warps a sub-partition, 1 block.
    const auto cudnn = theoretical_occupancy(footprint(256, 240), *d);
    CHECK(cudnn.blocks_per_sm == 1);
    CHECK(cudnn.fraction == doctest::Approx(0.125));
    CHECK(cudnn.limiter == Limiter::registers);
  }
}

TEST_CASE("occupancy names each limiting resource (sm_90)") {
  SUBCASE("threads") {
    const auto o = theoretical_occupancy(footprint(1024, 16), h100);
    CHECK(o.blocks_per_sm == 2);
    CHECK(o.fraction == doctest::Approx(1.0));
    CHECK(o.limiter == Limiter::threads);
  }
  SUBCASE("threads win a tie with registers") {
    // 32 registers: registers also allow exactly 2 blocks of 1024 threads.
    const auto o = theoretical_occupancy(footprint(1024, 32), h100);
    CHECK(o.blocks_per_sm == 2);
    CHECK(o.limiter == Limiter::threads);
  }
  SUBCASE("registers") {
    const auto o = theoretical_occupancy(footprint(256, 128), h100);
    CHECK(o.blocks_per_sm == 2);
    CHECK(o.warps_per_sm == 16);
    CHECK(o.limiter == Limiter::registers);
  }
  SUBCASE("shared memory") {
    // 100 KiB + 1 KiB reserved per block: 2 blocks in 228 KiB.
    const auto o = theoretical_occupancy(footprint(256, 32, 0, 100 * 1024), h100);
    CHECK(o.blocks_per_sm == 2);
    CHECK(o.limiter == Limiter::shared_memory);
  }
  SUBCASE("blocks") {
    const auto o = theoretical_occupancy(footprint(32, 32), h100);
    CHECK(o.blocks_per_sm == 32);
    CHECK(o.warps_per_sm == 32);
    CHECK(o.fraction == doctest::Approx(0.5));
    CHECK(o.limiter == Limiter::blocks);
  }
}

TEST_CASE("occupancy explains launches that cannot fit and what it does not model") {
  SUBCASE("too many registers for the block") {
    const auto o = theoretical_occupancy(footprint(512, 255), h100);
    CHECK(o.blocks_per_sm == 0);
    CHECK(o.fraction == 0);
    CHECK(o.limiter == Limiter::registers);
    CHECK(o.note.find("registers") != std::string::npos);
  }
  SUBCASE("too much shared memory") {
    const auto o = theoretical_occupancy(footprint(128, 32, 0, 232448 + 1), h100);
    CHECK(o.blocks_per_sm == 0);
    CHECK(o.limiter == Limiter::shared_memory);
    CHECK(o.note.find("shared memory") != std::string::npos);
  }
  SUBCASE("too many threads") {
    const auto o = theoretical_occupancy(footprint(2048, 16), h100);
    CHECK(o.blocks_per_sm == 0);
    CHECK(o.limiter == Limiter::threads);
  }
  SUBCASE("cluster launches are not modelled") {
    auto f = footprint(128, 32);
    f.cluster = {2, 1, 1};
    const auto o = theoretical_occupancy(f, h100);
    CHECK(o.blocks_per_sm == 16);
    CHECK(o.note.find("cluster") != std::string::npos);
  }
  SUBCASE("a smaller carveout than the theoretical figure assumes") {
    auto f = footprint(256, 32, 0, 30 * 1024);
    f.shared_executed = 64 * 1024;  // holds 2 blocks of 31 KiB, the full 228 KiB holds 7
    const auto o = theoretical_occupancy(f, h100);
    CHECK(o.blocks_per_sm == 7);
    CHECK(o.note.find("driver configured") != std::string::npos);
  }
  SUBCASE("an architecture the table does not know") {
    auto d = h100;
    d.major = 10;
    d.minor = 3;
    const auto o = theoretical_occupancy(footprint(256, 128), d);
    CHECK(o.blocks_per_sm == 2);
    CHECK(o.note.find("10.0") != std::string::npos);
  }
  SUBCASE("missing device properties") {
    const auto o = theoretical_occupancy(footprint(256, 32), expr::trace::DeviceProperties{});
    CHECK(o.blocks_per_sm == 0);
    CHECK(!o.note.empty());
  }
}

TEST_CASE("limiter names") {
  CHECK(to_string(Limiter::threads) == "threads");
  CHECK(to_string(Limiter::registers) == "registers");
  CHECK(to_string(Limiter::shared_memory) == "shared_memory");
  CHECK(to_string(Limiter::blocks) == "blocks");
}
