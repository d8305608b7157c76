// The counters phase off the GPU: joining the range profiler's ranges to the kernels of a traced
// iteration, counters in the native trace file and the Chrome trace, each reason a counter field is
// not evaluable, and the `counters:` setting of a series file.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/metrics.hpp"
#include "report/chrome_trace.hpp"
#include "series/series.hpp"
#include "trace/counters.hpp"
#include "trace/trace_file.hpp"

using namespace expr;
namespace fs = std::filesystem;

namespace {

// Two traced iterations of three launches: k_a, k_b, k_a, each launched from its iteration's host
// range. Within an iteration the kernels are stored out of launch order (by start time, as the
// decoder sorts them; a second stream can start a later launch first), so the join must go by
// correlation id.
trace::Trace two_iterations() {
  trace::Trace t;
  const auto a = t.strings.intern("k_a(float*)");
  const auto b = t.strings.intern("k_b(float*)");
  const auto mangled_a = t.strings.intern("_Z3k_aPf");
  const auto mangled_b = t.strings.intern("_Z3k_bPf");
  const auto launch = t.strings.intern("cudaLaunchKernel");
  std::uint32_t correlation = 10;
  for (std::int32_t it = 0; it < 2; ++it) {
    const trace::Ns base = 1000 * it;
    t.iterations.push_back({static_cast<std::int32_t>(t.ranges.size()), base, base + 1000});
    t.ranges.push_back({t.strings.intern("ProfilerStep#" + std::to_string(it)), trace::RangeKind::iteration, 1, base, base + 1000,
                        trace::none, it});
    trace::Kernel first, second, third;
    first.name = a, first.mangled = mangled_a, first.correlation = correlation++, first.start = base + 10, first.end = base + 110;
    second.name = b, second.mangled = mangled_b, second.correlation = correlation++, second.start = base + 300, second.end = base + 400;
    third.name = a, third.mangled = mangled_a, third.correlation = correlation++, third.start = base + 200, third.end = base + 290;
    for (auto* k : {&first, &third, &second}) {  // stored by start time
      t.api_calls.push_back({launch, trace::Api::runtime, 0, 1, k->start - 5, k->start - 2, k->correlation});
      t.kernels.push_back(*k);
    }
  }
  trace::link(t);
  t.collection.device_traced = true;
  t.counters.metrics = {"sm__warps_active.avg.pct_of_peak_sustained_active", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"};
  return t;
}

std::vector<trace::CounterRange> ranges(std::size_t n) {
  std::vector<trace::CounterRange> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back({std::to_string(i), {10.0 * static_cast<double>(i + 1), 1.0 + static_cast<double>(i)}});
  return out;
}

std::size_t measured(const trace::Trace& t) {
  return static_cast<std::size_t>(std::count_if(t.kernels.begin(), t.kernels.end(), [](const auto& k) { return !k.counters.empty(); }));
}

outcome::Measurement on_cuda(trace::Trace t) {
  outcome::Measurement m;
  m.experiment = "x";
  m.plugin = "p";
  m.status = outcome::Status::ok;
  m.device = Device::cuda;
  m.trace = outcome::TraceSource(std::make_shared<const trace::Trace>(std::move(t)));
  return m;
}

// kernel(name=...).field as a guess asks it: the value in percent, or the reason it is not evaluable.
std::variant<double, std::string> kernel_field(const outcome::Measurement& m, const std::string& name, const std::string& field) {
  const auto o = analysis::evaluate(m, {"kernel", {{"name", name}}, field});
  if (const auto* u = std::get_if<analysis::Unavailable>(&o)) return u->reason;
  return std::get<analysis::Quantity>(std::get<analysis::Observation>(o).value).value * 100;
}

std::string reason(const std::variant<double, std::string>& v) {
  REQUIRE(std::holds_alternative<std::string>(v));
  return std::get<std::string>(v);
}

// `text` read as a series file of its own, which is gone afterwards, also when reading throws.
series::Series read_series(const std::string& name, const std::string& text) {
  const auto file = fs::temp_directory_path() / ("expr_counters_" + name + ".yaml");
  std::ofstream(file) << text;
  struct Removal {
    fs::path file;
    ~Removal() { fs::remove(file); }
  } removal{file};
  return series::read(file);
}

}  // namespace

TEST_CASE("counter ranges join the kernels of their iteration in launch order") {
  auto t = two_iterations();
  CHECK(trace::join_counters(t, 1, ranges(3)) == "");
  CHECK(t.counters.iteration == 1);
  CHECK(t.counters.ranges == 3);
  // Iteration 1's kernels in launch order: k_a (correlation 13), k_b (14), k_a (15).
  const auto order = trace::kernels_in_launch_order(t, 1);
  REQUIRE(order.size() == 3);
  CHECK(t.kernels[order[0]].counters == std::vector<double>{10, 1});
  CHECK(t.kernels[order[1]].counters == std::vector<double>{20, 2});
  CHECK(t.strings[t.kernels[order[1]].name] == "k_b(float*)");
  CHECK(t.kernels[order[2]].counters == std::vector<double>{30, 3});
  CHECK(measured(t) == 3);  // iteration 0 is not measured
  REQUIRE(trace::kernels_in_launch_order(t, 0).size() == 3);
}

TEST_CASE("counter ranges that do not line up with the kernels join none of them") {
  SUBCASE("one range too many") {
    auto t = two_iterations();
    const auto problem = trace::join_counters(t, 1, ranges(4));
    CHECK(problem.find("launched 4 kernels and traced iteration 1 launched 3") != std::string::npos);
    CHECK(measured(t) == 0);
  }
  SUBCASE("a range named after another kernel") {
    auto t = two_iterations();
    auto named = ranges(3);
    named[0].name = "k_a(float*)";
    named[1].name = "_Z3k_aPf";  // k_b launched second
    const auto problem = trace::join_counters(t, 1, named);
    CHECK(problem.find("'_Z3k_aPf' is at the position of kernel 'k_b(float*)'") != std::string::npos);
    CHECK(measured(t) == 0);
  }
  SUBCASE("a range numbered out of order") {
    auto t = two_iterations();
    auto numbered = ranges(3);
    std::swap(numbered[0].name, numbered[1].name);
    CHECK(trace::join_counters(t, 1, numbered).find("counter range 1 is at position 0") != std::string::npos);
    CHECK(measured(t) == 0);
  }
  SUBCASE("a range with a value missing") {
    auto t = two_iterations();
    auto short_range = ranges(3);
    short_range[2].values.pop_back();
    CHECK(trace::join_counters(t, 1, short_range).find("holds 1 values for 2 metrics") != std::string::npos);
    CHECK(measured(t) == 0);
  }
}

TEST_CASE("counters survive the native trace file") {
  auto t = two_iterations();
  REQUIRE(trace::join_counters(t, 1, ranges(3)) == "");
  t.counters.state = trace::CounterCollection::State::collected;
  t.counters.replay = trace::CounterReplay::kernel;
  t.counters.passes = 11;
  t.counters.wall = 123456789;
  t.kernels[trace::kernels_in_launch_order(t, 1)[2]].counters[1] = std::nan("");  // a value CUPTI could not evaluate
  const auto file = fs::temp_directory_path() / "expr_counters_roundtrip.json";
  trace::save(t, file);
  const auto back = trace::load(file);
  fs::remove(file);
  CHECK(back.counters.state == trace::CounterCollection::State::collected);
  CHECK(back.counters.metrics == t.counters.metrics);
  CHECK(back.counters.iteration == 1);
  CHECK(back.counters.replay == trace::CounterReplay::kernel);
  CHECK(back.counters.passes == 11);
  CHECK(back.counters.wall == 123456789);
  const auto order = trace::kernels_in_launch_order(back, 1);
  REQUIRE(order.size() == 3);
  CHECK(back.kernels[order[1]].counters == std::vector<double>{20, 2});
  CHECK(std::isnan(back.kernels[order[2]].counters[1]));
  CHECK(measured(back) == 3);
}

TEST_CASE("a counter field reads the measured launches of the kernel") {
  auto t = two_iterations();
  REQUIRE(trace::join_counters(t, 1, ranges(3)) == "");
  t.counters.state = trace::CounterCollection::State::collected;
  const auto m = on_cuda(t);
  // k_a: launches 1 and 3 of iteration 1, 10% and 30% achieved occupancy.
  CHECK(std::get<double>(kernel_field(m, "k_a", "achieved_occupancy")) == doctest::Approx(20));
  CHECK(std::get<double>(kernel_field(m, "k_b", "dram_throughput")) == doctest::Approx(2));
  // Collected, but not among the metrics the series asked for.
  CHECK(reason(kernel_field(m, "k_a", "sm_throughput")).find("sm__throughput.avg.pct_of_peak_sustained_elapsed) was not among the counters collected") !=
        std::string::npos);
}

TEST_CASE("each reason a counter field is not evaluable is its own") {
  using State = trace::CounterCollection::State;
  SUBCASE("a cpu run") {
    outcome::Measurement m;
    m.status = outcome::Status::ok;
    m.device = Device::cpu;
    CHECK(reason(kernel_field(m, "k_a", "achieved_occupancy")) == "achieved_occupancy needs hardware counters, and the experiment ran on the cpu");
  }
  SUBCASE("counters off") {
    auto t = two_iterations();
    t.counters.state = State::off;
    t.counters.reason = "counters are off for this experiment";
    CHECK(reason(kernel_field(on_cuda(t), "k_a", "sm_throughput")) == "sm_throughput needs hardware counters, and counters are off for this experiment");
  }
  SUBCASE("counters unavailable, with CUPTI's error") {
    auto t = two_iterations();
    t.counters.state = State::unavailable;
    t.counters.reason = "cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    CHECK(reason(kernel_field(on_cuda(t), "k_a", "tensor_active")) ==
          "tensor_active needs hardware counters, which were unavailable: cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  }
  SUBCASE("a trace recorded before the counters phase") {
    const auto t = trace::load(fs::path(EXPR_SOURCE_DIR) / "tests/data/series3-h200/experiments/sdpa_flash/expr_trace.json");
    CHECK(t.counters.state == State::not_taken);
    CHECK(reason(kernel_field(on_cuda(t), "flash", "dram_throughput")) ==
          "dram_throughput needs hardware counters, and none were taken: the trace was recorded before expr had a counters phase");
    // The footprint's figures still answer.
    const auto occupancy = kernel_field(on_cuda(t), "flash", "occupancy");
    CHECK(std::holds_alternative<double>(occupancy));
  }
}

TEST_CASE("counters: on, off or a list of metrics, in the defaults and per experiment") {
  const auto s = read_series("ok",
                             "series: x\n"
                             "defaults:\n"
                             "  counters: on\n"
                             "experiments:\n"
                             "  - name: a\n    plugin: p\n"
                             "  - name: b\n    plugin: p\n    counters: off\n"
                             "  - name: c\n    plugin: p\n    counters: [achieved_occupancy, sm__cycles_active.avg]\n");
  REQUIRE(s.experiments.size() == 3);
  CHECK(s.experiments[0].counters.on);
  CHECK(s.experiments[0].counters.metrics.size() == trace::counter_metrics.size());
  CHECK(!s.experiments[1].counters.on);
  CHECK(s.experiments[2].counters.metrics ==
        std::vector<std::string>{"sm__warps_active.avg.pct_of_peak_sustained_active", "sm__cycles_active.avg"});
}

TEST_CASE("counters_replay: iteration unless the defaults or the experiment say kernel, and a per-experiment counters: keeps it") {
  const auto s = read_series("replay",
                             "series: x\n"
                             "defaults:\n"
                             "  counters_replay: kernel\n"
                             "experiments:\n"
                             "  - name: a\n    plugin: p\n    counters: [dram_throughput]\n"
                             "  - name: b\n    plugin: p\n    counters: on\n    counters_replay: iteration\n");
  REQUIRE(s.experiments.size() == 2);
  CHECK(s.experiments[0].counters.replay == trace::CounterReplay::kernel);
  CHECK(s.experiments[1].counters.replay == trace::CounterReplay::iteration);
  const auto plain = read_series("replay_default", "series: x\nexperiments:\n  - name: a\n    plugin: p\n    counters: on\n");
  CHECK(plain.experiments[0].counters.replay == trace::CounterReplay::iteration);
}

TEST_CASE("a bad counters setting is reported where it was written") {
  // `setting`: the experiment's line 5, after its four spaces of indentation.
  const auto problems = [](const std::string& name, const std::string& setting) {
    std::vector<std::string> out;
    try {
      read_series(name, "series: x\nexperiments:\n  - name: a\n    plugin: p\n    " + setting + "\n");
    } catch (const util::InputError& e) {
      for (const auto& p : e.problems()) out.push_back(fmt::format("{}:{}: {}", p.pos.line, p.pos.column, p.message));
    }
    return out;
  };
  const auto word = problems("word", "counters: sometimes");
  REQUIRE(word.size() == 1);
  CHECK(word[0].starts_with("5:15: counters must be on, off or a list of metrics"));
  const auto typo = problems("typo", "counters: [achieved_occupancy, achived_occupancy]");
  REQUIRE(typo.size() == 1);
  CHECK(typo[0].starts_with("5:36: unknown counter metric 'achived_occupancy'; did you mean 'achieved_occupancy'?"));
  const auto twice = problems("twice", "counters: [sm_throughput, sm__throughput.avg.pct_of_peak_sustained_elapsed]");
  REQUIRE(twice.size() == 1);
  CHECK(twice[0].find("listed twice") != std::string::npos);
  CHECK(problems("empty", "counters: []").size() == 1);
  CHECK(problems("replay", "counters_replay: kernels") ==
        std::vector<std::string>{"5:22: counters_replay must be kernel or iteration, not 'kernels'; did you mean 'kernel'?"});
}

TEST_CASE("the Chrome trace's kernel args carry the counters of measured launches") {
  auto t = two_iterations();
  t.counters.metrics[1] = "sm__cycles_active.avg";  // a raw Nsight name keeps its name
  REQUIRE(trace::join_counters(t, 1, ranges(3)) == "");
  t.counters.state = trace::CounterCollection::State::collected;
  fmt::memory_buffer out;
  report::render_chrome_trace(t, std::vector<std::optional<analysis::KernelOccupancy>>(t.kernels.size()), {"x", "run/x"}, out);
  const auto chrome = nlohmann::json::parse(std::string_view(out.data(), out.size()));
  std::vector<double> occupancy, cycles;
  int unmeasured = 0;
  for (const auto& ev : chrome.at("traceEvents")) {
    // A short kernel is a begin/end pair (report/chrome_trace.hpp): the begin carries the args.
    if (ev.value("cat", "") != "kernel" || ev.value("ph", "") == "E") continue;
    const auto& args = ev.at("args");
    if (!args.contains("achieved occupancy %")) {
      CHECK(args.at("iteration") == 0);
      ++unmeasured;
      continue;
    }
    occupancy.push_back(args.at("achieved occupancy %"));
    cycles.push_back(args.at("sm__cycles_active.avg"));
  }
  std::sort(occupancy.begin(), occupancy.end());
  std::sort(cycles.begin(), cycles.end());
  CHECK(unmeasured == 3);
  CHECK(occupancy == std::vector<double>{10, 20, 30});
  CHECK(cycles == std::vector<double>{1, 2, 3});
}
