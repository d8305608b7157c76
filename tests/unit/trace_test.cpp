// The trace model on recorded H200 traces: linking, the native file, occupancy of real kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "analysis/metrics.hpp"
#include "analysis/occupancy.hpp"
#include "trace/trace_file.hpp"

using namespace expr;
namespace fs = std::filesystem;

namespace {
const fs::path data = fs::path(EXPR_SOURCE_DIR) / "tests" / "data";
trace::Trace recorded(const std::string& run, const std::string& experiment) {
  return trace::load(data / run / "experiments" / experiment / "expr_trace.json");
}
const trace::Kernel& kernel_named(const trace::Trace& t, std::string_view part) {
  for (const auto& k : t.kernels)
    if (t.strings[k.name].find(part) != std::string::npos) return k;
  FAIL("no kernel named ", part);
  return t.kernels.front();
}
}  // namespace

TEST_CASE("every recorded kernel, copy and memset is linked to its launching call and an iteration") {
  for (const auto* experiment : {"naive", "sdpa_math", "sdpa_cudnn"}) {
    const auto t = recorded("series3-h200", experiment);
    CHECK(t.collection.device_traced);
    CHECK(t.collection.dropped_records == 0);
    CHECK(t.collection.unattributed == 0);
    REQUIRE(t.iterations.size() == 3);
    for (const auto& k : t.kernels) {
      REQUIRE(k.api_call != trace::none);
      const auto& call = t.api_calls[static_cast<std::size_t>(k.api_call)];
      CHECK(call.correlation == k.correlation);
      CHECK(call.start <= k.start);  // launched before it ran, on the shared clock
      CHECK(call.range != trace::none);
    }
  }
}

TEST_CASE("API calls land in the innermost host range of their thread") {
  const auto t = recorded("series3-h200", "naive");
  const auto& copy = t.copies.front();
  const auto& call = t.api_calls[static_cast<std::size_t>(copy.api_call)];
  // The Memcpy of out-of-place masked_fill: aten::copy_ inside aten::clone inside aten::masked_fill.
  std::vector<std::string> chain;
  for (auto r = call.range; r != trace::none; r = t.ranges[static_cast<std::size_t>(r)].parent)
    chain.push_back(t.strings[t.ranges[static_cast<std::size_t>(r)].name]);
  REQUIRE(chain.size() >= 4);
  CHECK(chain[0] == "aten::copy_");
  CHECK(std::find(chain.begin(), chain.end(), "aten::clone") != chain.end());
  CHECK(std::find(chain.begin(), chain.end(), "aten::masked_fill") != chain.end());
  CHECK(chain.back().starts_with("ProfilerStep#"));
}

TEST_CASE("the native trace file round-trips") {
  const auto t = recorded("series3-h200", "sdpa_flash");
  const auto file = fs::temp_directory_path() / "expr_trace_roundtrip.json";
  trace::save(t, file);
  const auto again = trace::load(file);
  fs::remove(file);
  CHECK(again.record_count() == t.record_count());
  CHECK(again.strings.all() == t.strings.all());
  REQUIRE(again.kernels.size() == t.kernels.size());
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    CHECK(again.kernels[i].start == t.kernels[i].start);
    CHECK(again.kernels[i].footprint.registers_per_thread == t.kernels[i].footprint.registers_per_thread);
    CHECK(again.kernels[i].footprint.grid == t.kernels[i].footprint.grid);
    CHECK(again.kernels[i].api_call == t.kernels[i].api_call);
  }
  CHECK(again.devices.at(0).multiprocessors == 132);
}

TEST_CASE("the native trace file keeps what the Chrome export needs, and reads traces recorded before it did") {
  auto t = recorded("cuda-probe-h200", "probe");
  // Recorded before these were kept: all zero or absent.
  CHECK(t.unix_offset == 0);
  CHECK_FALSE(t.distributed);
  CHECK(t.devices.at(0).global_memory == 0);
  CHECK(std::all_of(t.api_calls.begin(), t.api_calls.end(), [](const trace::ApiCall& c) { return c.cbid == 0; }));
  // Values of the test's own, as a new recording would have them.
  t.unix_offset = 1'700'000'000'123'456'789;
  t.distributed = trace::Distributed{2, 4};
  t.devices.at(0).global_memory = 150'000'000'000;
  t.devices.at(0).max_threads_per_block = 1024;
  t.devices.at(0).shared_per_block = 49152;
  for (std::size_t i = 0; i < t.api_calls.size(); ++i) t.api_calls[i].cbid = static_cast<std::uint32_t>(200 + i);
  const auto file = fs::temp_directory_path() / "expr_trace_new_fields.json";
  trace::save(t, file);
  const auto again = trace::load(file);
  fs::remove(file);
  CHECK(again.unix_offset == t.unix_offset);
  REQUIRE(again.distributed);
  CHECK(again.distributed->rank == 2);
  CHECK(again.distributed->world_size == 4);
  CHECK(again.devices.at(0).global_memory == 150'000'000'000);
  CHECK(again.devices.at(0).max_threads_per_block == 1024);
  CHECK(again.devices.at(0).shared_per_block == 49152);
  for (std::size_t i = 0; i < t.api_calls.size(); ++i) CHECK(again.api_calls[i].cbid == 200 + i);
}

TEST_CASE("occupancy of the recorded attention kernels") {
  const auto flash = recorded("series3-h200", "sdpa_flash");
  const auto& f = kernel_named(flash, "flash_fwd_kernel");
  const auto occ = analysis::theoretical_occupancy(f.footprint, flash.devices.at(0));
  CHECK(f.footprint.block.volume() == 128);
  CHECK(f.footprint.registers_per_thread == 255);
  CHECK(occ.blocks_per_sm == 2);
  CHECK(occ.fraction == doctest::Approx(0.125));
  CHECK(occ.limiter == analysis::Limiter::registers);

  const auto cudnn = recorded("series3-h200", "sdpa_cudnn");
  const auto& c = kernel_named(cudnn, "cudnn_generated");
  const auto occ_c = analysis::theoretical_occupancy(c.footprint, cudnn.devices.at(0));
  CHECK(c.footprint.block.volume() == 384);
  CHECK(occ_c.warps_per_sm == 12);
  CHECK(occ_c.fraction == doctest::Approx(0.1875));
}

TEST_CASE("an op counted inside another op counted says so in its evidence") {
  // What a LayerNorm plugin met: aten::var calls aten::var, and ops("^aten::var$") counts both.
  trace::Trace t;
  const auto range = [&](std::string_view name, trace::RangeKind kind, std::int32_t parent) {
    t.ranges.push_back({t.strings.intern(name), kind, 0, 0, 100, parent, 0});
  };
  range("iteration", trace::RangeKind::plugin, trace::none);
  range("aten::layer_norm", trace::RangeKind::op, 0);
  range("aten::var", trace::RangeKind::op, 1);
  range("aten::var", trace::RangeKind::op, 2);
  range("aten::mean", trace::RangeKind::op, 1);
  t.iterations.push_back({0, 0, 100});
  t.collection.ops_traced = true;
  outcome::Measurement m;
  m.plugin = "test";
  m.status = outcome::Status::ok;
  m.trace = outcome::TraceSource(std::make_shared<const trace::Trace>(std::move(t)));
  const auto var = std::get<analysis::Observation>(analysis::evaluate(m, {"ops", {{"name", "^aten::var$"}}, "", false}));
  CHECK(var.evidence.find("; 1 of them ran inside another op counted (aten::var inside aten::var), so each level counts") != std::string::npos);
  const auto mean = std::get<analysis::Observation>(analysis::evaluate(m, {"ops", {{"name", "^aten::mean$"}}, "", false}));
  CHECK(mean.evidence.find("inside") == std::string::npos);
}
