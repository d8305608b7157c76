// The Chrome trace writer on recorded H200 traces: exact durations, sub-µs events as begin/end
// pairs, and the Kineto fields a trace records (cbid, device properties, Unix base time, rank)
// written when recorded and left out when not.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/occupancy.hpp"
#include "report/chrome_trace.hpp"
#include "trace/trace_file.hpp"

using namespace expr;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path data = fs::path(EXPR_SOURCE_DIR) / "tests" / "data";

trace::Trace recorded(const std::string& run, const std::string& experiment) {
  return trace::load(data / run / "experiments" / experiment / "expr_trace.json");
}

std::string render(const trace::Trace& t) {
  fmt::memory_buffer out;
  report::render_chrome_trace(t, analysis::kernel_occupancies(t), {"title", "run/experiment"}, out);
  return fmt::to_string(out);
}

std::int64_t ns(const json& micros) { return std::llround(micros.get<double>() * 1000); }

// Each exported event's length in ns, by category: "X" events' dur, "B" to "E" for the others.
std::map<std::string, std::vector<std::int64_t>> lengths(const json& trace, int& pairs) {
  std::map<std::string, std::vector<std::int64_t>> out;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const json*>> open;
  for (const auto& ev : trace.at("traceEvents")) {
    const auto ph = ev.at("ph").get<std::string>();
    if (ph == "X") out[ev.at("cat")].push_back(ns(ev.at("dur")));
    if (ph == "B") open[{ev.at("pid"), ev.at("tid")}].push_back(&ev);
    if (ph == "E") {
      auto& stack = open[{ev.at("pid"), ev.at("tid")}];
      REQUIRE(!stack.empty());
      const auto& begin = *stack.back();
      stack.pop_back();
      out[begin.at("cat")].push_back(ns(ev.at("ts")) - ns(begin.at("ts")));
      ++pairs;
    }
  }
  for (auto& [cat, v] : out) std::sort(v.begin(), v.end());
  return out;
}

template <class Records>
std::vector<std::int64_t> sorted_lengths(const Records& records) {
  std::vector<std::int64_t> out;
  for (const auto& r : records) out.push_back(r.end - r.start);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("the Chrome export keeps every duration to the ns, events under 1 µs as begin/end pairs") {
  // cuDNN's run: a 0.7 µs memset before its kernel, and driver calls shorter than 1 µs.
  const auto t = recorded("series3-h200", "sdpa_cudnn");
  const auto trace = json::parse(render(t));
  int pairs = 0;
  auto by_cat = lengths(trace, pairs);
  CHECK(pairs > 0);
  CHECK(by_cat["kernel"] == sorted_lengths(t.kernels));
  CHECK(by_cat["gpu_memset"] == sorted_lengths(t.memsets));
  auto api = by_cat["cuda_runtime"];
  api.insert(api.end(), by_cat["cuda_driver"].begin(), by_cat["cuda_driver"].end());
  std::sort(api.begin(), api.end());
  CHECK(api == sorted_lengths(t.api_calls));
  auto ranges = by_cat["cpu_op"];
  ranges.insert(ranges.end(), by_cat["user_annotation"].begin(), by_cat["user_annotation"].end());
  std::sort(ranges.begin(), ranges.end());
  CHECK(ranges == sorted_lengths(t.ranges));
  for (const auto& ev : trace.at("traceEvents")) {
    if (ev.at("ph") == "X") CHECK(ns(ev.at("dur")) >= report::shortest_complete_event_ns);
  }
  CHECK(t.memsets.at(0).duration() < 1000);  // the recorded memset that needs the pair
}

TEST_CASE("Kineto's kernel fields keep Kineto's meanings, and expr's own have names of their own") {
  const auto t = recorded("series3-h200", "sdpa_flash");
  const auto trace = json::parse(render(t));
  const auto& props = trace.at("deviceProperties").at(0);
  CHECK(props.at("numSms") == 132);
  int kernels = 0;
  for (const auto& ev : trace.at("traceEvents")) {
    if (ev.value("cat", "") != "kernel") continue;
    ++kernels;
    const auto& a = ev.at("args");
    // 128 threads x 255 registers: 2 resident blocks per SM, 8 of 64 warps.
    CHECK(a.at("resident blocks per SM") == 2);
    CHECK(a.at("resident warps per SM") == 8);
    CHECK(a.at("theoretical occupancy %").get<double>() == doctest::Approx(12.5));
    CHECK(a.at("occupancy limited by") == "registers");
    const auto& grid = a.at("grid");
    const double blocks = grid.at(0).get<double>() * grid.at(1).get<double>() * grid.at(2).get<double>();
    CHECK(a.at("blocks per SM").get<double>() == doctest::Approx(blocks / 132));
    CHECK(a.at("warps per SM").get<double>() == doctest::Approx(blocks / 132 * 128 / 32));
    CHECK(a.at("est. achieved occupancy %") == std::lround(std::min(2.0, blocks / 132) * 128 / 2048 * 100));
  }
  CHECK(kernels == 3);
}

TEST_CASE("fields a trace did not record are left out, and written once it does") {
  auto t = recorded("cuda-probe-h200", "probe");
  auto trace = json::parse(render(t));
  CHECK_FALSE(trace.contains("baseTimeNanoseconds"));
  CHECK_FALSE(trace.contains("distributedInfo"));
  CHECK_FALSE(trace.at("deviceProperties").at(0).contains("totalGlobalMem"));
  for (const auto& ev : trace.at("traceEvents"))
    if (ev.value("cat", "") == "cuda_runtime") CHECK_FALSE(ev.at("args").contains("cbid"));

  // As a trace recorded now has them (the values here are the test's own).
  t.unix_offset = 1'700'000'000'000'000'000;
  t.distributed = trace::Distributed{3, 8};
  t.devices.at(0).global_memory = 150'000'000'000;
  t.devices.at(0).max_threads_per_block = 1024;
  t.devices.at(0).shared_per_block = 49152;
  for (auto& c : t.api_calls) c.cbid = 211;
  const auto text = render(t);
  trace = json::parse(text);
  CHECK(trace.at("baseTimeNanoseconds") == t.earliest() + t.unix_offset);
  CHECK(trace.at("distributedInfo") == json{{"rank", 3}, {"world_size", 8}});
  CHECK(text.find("\"rank\": 3") != std::string::npos);  // the pattern HTA looks for
  const auto& props = trace.at("deviceProperties").at(0);
  CHECK(props.at("totalGlobalMem") == 150'000'000'000);
  CHECK(props.at("maxThreadsPerBlock") == 1024);
  CHECK(props.at("sharedMemPerBlock") == 49152);
  int calls = 0;
  for (const auto& ev : trace.at("traceEvents"))
    if (ev.value("cat", "") == "cuda_runtime" && ev.at("ph") != "E") calls += ev.at("args").at("cbid") == 211;
  CHECK(calls > 0);
  CHECK(trace.at("trace_id") == "run/experiment");
}
