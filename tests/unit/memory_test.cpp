// The memory figures on allocator and driver events made in the test: peak, allocated bytes and
// allocations per traced iteration, which side of the device counts, why a trace without them
// cannot answer, the native file and the Chrome export that keep them, and the structure that
// `expr compare` reads (a peak that grows is a regression). The real allocators are measured in
// the CPU series end to end (tests/series/cpu.yaml) and on the H200 (docs/series3-h200.md).
#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "analysis/memory.hpp"
#include "analysis/metrics.hpp"
#include "analysis/occupancy.hpp"
#include "analysis/structure.hpp"
#include "report/chrome_trace.hpp"
#include "trace/trace_file.hpp"

using namespace expr;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::int64_t MiB = 1 << 20;

// Two traced iterations of what the naive attention does with its score tensor S (256 MiB) on
// device 0, and one host allocation the CUDA side must not count.
trace::Trace two_iterations() {
  trace::Trace t;
  const auto range = [&](trace::Ns start, trace::Ns end) {
    t.ranges.push_back({t.strings.intern("ProfilerStep#" + std::to_string(t.iterations.size())), trace::RangeKind::iteration, 1, start,
                        end, trace::none, static_cast<std::int32_t>(t.iterations.size())});
    t.iterations.push_back({static_cast<std::int32_t>(t.ranges.size() - 1), start, end});
  };
  range(1000, 2000);
  range(3000, 4000);
  const auto event = [&](trace::Ns time, std::int64_t bytes, std::int64_t total, std::int32_t iteration, std::int32_t device = 0) {
    t.memory.push_back({trace::MemorySource::allocator, device, 1, time, bytes, 0x7000 + static_cast<std::uint64_t>(time), total,
                        1024 * MiB, 0, iteration});
  };
  // Iteration 0 starts with 16 MiB held: two S at once, then one released, then the output.
  event(1100, 256 * MiB, 272 * MiB, 0);
  event(1200, 256 * MiB, 528 * MiB, 0);
  event(1300, -256 * MiB, 272 * MiB, 0);
  event(1350, 4, 4, 0, -1);  // host memory
  event(1400, 16 * MiB, 288 * MiB, 0);
  event(1500, -256 * MiB, 32 * MiB, 0);
  event(1600, -16 * MiB, 16 * MiB, 0);
  // Iteration 1 needs only one S.
  event(3100, 256 * MiB, 272 * MiB, 1);
  event(3200, -256 * MiB, 16 * MiB, 1);
  t.collection.allocator_traced = true;
  return t;
}

outcome::Measurement measured(trace::Trace t, Device device = Device::cuda) {
  outcome::Measurement m;
  m.experiment = "naive";
  m.plugin = "masked_fill";
  m.device = device;
  m.status = outcome::Status::ok;
  m.trace = outcome::TraceSource(std::make_shared<const trace::Trace>(std::move(t)));
  return m;
}

analysis::Observation observed(const outcome::Measurement& m, const std::string& metric) {
  const auto o = analysis::evaluate(m, {metric, {}, ""});
  const auto* obs = std::get_if<analysis::Observation>(&o);
  REQUIRE_MESSAGE(obs, metric, ": ", std::get<analysis::Unavailable>(o).reason);
  return *obs;
}

double value(const analysis::Observation& o) { return std::get<analysis::Quantity>(o.value).value; }

}  // namespace

TEST_CASE("peak, allocated bytes and allocations per traced iteration, of the experiment's side of the device") {
  const auto t = two_iterations();
  const auto device = analysis::memory_per_iteration(t, trace::MemorySource::allocator, true);
  REQUIRE(device.size() == 2);
  CHECK(device[0].peak == 512 * MiB);  // both score tensors at once, above the 16 MiB held before
  CHECK(device[0].allocated == 528 * MiB);
  CHECK(device[0].allocations == 3);
  CHECK(device[0].total_allocated_at_peak == 528 * MiB);
  CHECK(device[1].peak == 256 * MiB);
  const auto host = analysis::memory_per_iteration(t, trace::MemorySource::allocator, false);
  CHECK(host[0].allocated == 4);
  CHECK(host[1].allocations == 0);

  const auto m = measured(t);
  const auto peak = observed(m, "peak_memory");
  CHECK(value(peak) == doctest::Approx(512.0 * MiB));  // the largest iteration's peak
  CHECK(peak.evidence.find("per iteration: 512 MiB, 256 MiB") != std::string::npos);
  CHECK(peak.evidence.find("it held 528 MiB for tensors and had 1 GiB reserved") != std::string::npos);
  CHECK(value(observed(m, "allocated_bytes")) == doctest::Approx((528.0 + 256.0) / 2 * MiB));
  CHECK(value(observed(m, "allocations")) == doctest::Approx(2.0));
  // The same trace read as a CPU experiment's counts host memory only.
  CHECK(value(observed(measured(t, Device::cpu), "peak_memory")) == doctest::Approx(4.0));
}

TEST_CASE("a trace without the allocator's events cannot give its figures, and says how a plugin reports them") {
  auto t = two_iterations();
  t.collection.allocator_traced = false;
  const auto o = analysis::evaluate(measured(t), {"peak_memory", {}, ""});
  REQUIRE(std::holds_alternative<analysis::Unavailable>(o));
  CHECK(std::get<analysis::Unavailable>(o).reason.find("expr_torch::trace_memory") != std::string::npos);
  // The driver's figures need CUPTI's records, which this trace lacks.
  t.collection.device_traced = true;
  const auto driver = analysis::evaluate(measured(t), {"driver_allocations", {}, ""});
  REQUIRE(std::holds_alternative<analysis::Unavailable>(driver));
  CHECK(std::get<analysis::Unavailable>(driver).reason.find("driver's allocation records") != std::string::npos);
}

TEST_CASE("the driver's allocations take the iteration of the API call that made them") {
  auto t = two_iterations();
  t.api_calls.push_back({t.strings.intern("cudaMalloc"), trace::Api::runtime, 0, 1, 3150, 3180, 77});
  t.memory.push_back({trace::MemorySource::driver, 0, 0, 3170, 2 * MiB, 0x9000, -1, -1, 77, trace::none});
  t.memory.push_back({trace::MemorySource::driver, 0, 0, 5000, -2 * MiB, 0x9000, -1, -1, 78, trace::none});  // after the iterations
  t.collection.device_traced = true;
  t.collection.driver_memory_traced = true;
  trace::link(t);
  CHECK(t.memory[t.memory.size() - 2].iteration == 1);
  CHECK(t.memory.back().iteration == trace::none);
  const auto m = measured(t);
  CHECK(value(observed(m, "driver_allocations")) == doctest::Approx(0.5));  // one in two iterations
  CHECK(value(observed(m, "driver_allocated_bytes")) == doctest::Approx(1.0 * MiB));
}

TEST_CASE("memory events survive the native trace file, and a trace from before them reads as not traced") {
  const auto t = two_iterations();
  const auto file = fs::temp_directory_path() / "expr_trace_memory.json";
  trace::save(t, file);
  const auto again = trace::load(file);
  fs::remove(file);
  CHECK(again.collection.allocator_traced);
  REQUIRE(again.memory.size() == t.memory.size());
  for (std::size_t i = 0; i < t.memory.size(); ++i) {
    CHECK(again.memory[i].bytes == t.memory[i].bytes);
    CHECK(again.memory[i].time == t.memory[i].time);
    CHECK(again.memory[i].device == t.memory[i].device);
    CHECK(again.memory[i].total_allocated == t.memory[i].total_allocated);
    CHECK(again.memory[i].iteration == t.memory[i].iteration);
  }
  const auto old = trace::load(fs::path(EXPR_SOURCE_DIR) / "tests" / "data" / "cuda-probe-h200" / "experiments" / "probe" / "expr_trace.json");
  CHECK_FALSE(old.collection.allocator_traced);
  CHECK_FALSE(old.collection.driver_memory_traced);
  CHECK(old.memory.empty());
}

TEST_CASE("the allocator's events are Kineto's [memory] instants, which TensorBoard's memory view reads") {
  auto t = two_iterations();
  t.process = 4321;
  fmt::memory_buffer out;
  report::render_chrome_trace(t, analysis::kernel_occupancies(t), {"title", "run/naive"}, out);
  const auto doc = json::parse(fmt::to_string(out));
  std::vector<json> memory;
  for (const auto& ev : doc.at("traceEvents"))
    if (ev.value("name", "") == "[memory]") memory.push_back(ev);
  REQUIRE(memory.size() == t.memory.size());
  const auto& first = memory.front();
  CHECK(first.at("ph") == "i");
  CHECK(first.at("cat") == "cpu_instant_event");
  CHECK(first.at("s") == "t");
  CHECK(first.at("pid") == 4321);
  CHECK(first.at("tid") == 1);
  const auto& args = first.at("args");
  CHECK(args.at("Device Type") == 1);  // c10's CUDA
  CHECK(args.at("Device Id") == 0);
  CHECK(args.at("Bytes") == 256 * MiB);
  CHECK(args.at("Total Allocated") == 272 * MiB);
  CHECK(args.at("Total Reserved") == 1024 * MiB);
  CHECK(memory[3].at("args").at("Device Type") == 0);  // the host allocation: c10's CPU
}

TEST_CASE("the peak and the allocations are structure: a peak that grows is a regression, shown in bytes") {
  const auto base = analysis::structure(measured(two_iterations()));
  const auto* peak = base.find("peak memory");
  REQUIRE(peak);
  CHECK(analysis::figure_text("peak memory", peak->value) == "512 MiB");
  CHECK(base.covers("peak memory"));
  CHECK(analysis::worse_when("peak memory") == analysis::Worse::more);
  CHECK(analysis::source_of("allocations") == analysis::FigureSource::allocator);
  auto untraced = two_iterations();
  untraced.collection.allocator_traced = false;
  const auto without = analysis::structure(measured(untraced));
  CHECK_FALSE(without.covers("peak memory"));  // not compared rather than read as zero
  CHECK_FALSE(without.find("peak memory"));
}
