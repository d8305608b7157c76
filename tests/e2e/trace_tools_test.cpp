// The rules the trace tools rely on, checked over expr's Chrome traces without the tools (CI has
// neither TensorBoard nor HTA): TensorBoard's profiler plugin finds runs by the file name pattern;
// HTA reads every *.json of a folder as one rank's trace, rounds complete events to whole µs and
// fails on negative lengths; both read Kineto's keys with Kineto's meanings, pair launches with
// device work by correlation and flows, and build call stacks from nesting. docs/chrome-trace.md
// says what each field means. The rules are checked on the CPU series run and on the recorded
// H200 runs replayed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "harness.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path data = fs::path(EXPR_SOURCE_DIR) / "tests" / "data";

std::int64_t ns(double micros) { return std::llround(micros * 1000); }

// HTA rounds a complete event's start up and its end down to whole µs (trace_parser.py).
std::int64_t hta_length_us(std::int64_t start_ns, std::int64_t end_ns) {
  const auto up = [](std::int64_t v) { return v >= 0 ? (v + 999) / 1000 : v / 1000; };
  const auto down = [](std::int64_t v) { return v >= 0 ? v / 1000 : -((-v + 999) / 1000); };
  return down(end_ns) - up(start_ns);
}

// TensorBoard's profiler plugin: a worker's file is NAME[.SPAN].pt.trace.json[.gz].
bool tensorboard_finds(const fs::path& file) {
  const auto name = file.filename().string();
  return name.ends_with(".pt.trace.json") || name.ends_with(".pt.trace.json.gz");
}

// An allocation or release: the allocator's as Kineto writes them with profile_memory, which
// TensorBoard's memory view reads (its MemoryEvent: Device Type as c10's, Device Id, Addr, Bytes,
// Total Allocated, Total Reserved); the driver's under another name, so that view never adds them.
void check_memory_event(const json& ev) {
  for (const char* key : {"cat", "s", "pid", "tid", "ts", "args"}) REQUIRE_MESSAGE(ev.contains(key), key);
  const auto& args = ev.at("args");
  for (const char* key : {"Device Type", "Device Id", "Addr", "Bytes"}) CHECK_MESSAGE(args.contains(key), key);
  CHECK((args.at("Device Type") == 0 || args.at("Device Type") == 1));
  CHECK(args.at("Bytes").get<std::int64_t>() != 0);
  if (ev.at("name") == "[memory]") {
    CHECK(ev.at("cat") == "cpu_instant_event");
    CHECK(ev.at("s") == "t");
    CHECK(args.contains("Total Allocated"));
  } else {
    CHECK(ev.at("name") == "[driver memory]");
    CHECK(ev.at("cat") == "cuda_driver");
  }
}

struct Span {
  std::int64_t start, end;  // ns
  const json* event;        // the "X" or "B" event
  bool pair;                // written as "B" and "E"
};

// Every rule over one Chrome trace of `experiment` in a run whose results.json is `results`.
void check_trace(const json& trace, const std::string& text, const json& results, const std::string& experiment, bool has_base_time) {
  INFO("trace of ", experiment);
  // Top level, as Kineto writes it.
  CHECK(trace.at("schemaVersion") == 1);
  CHECK(trace.at("traceEvents").is_array());
  CHECK(trace.at("deviceProperties").is_array());
  CHECK(trace.at("displayTimeUnit") == "ms");
  CHECK(trace.at("trace_id") == results.at("run").at("id").get<std::string>() + "/" + experiment);
  CHECK(trace.contains("baseTimeNanoseconds") == has_base_time);
  if (trace.contains("distributedInfo")) {
    // HTA finds the rank with the pattern "rank":\s+(\d+): a space after the colon.
    CHECK(text.find("\"rank\": " + std::to_string(trace.at("distributedInfo").at("rank").get<int>())) != std::string::npos);
  }
  std::map<int, const json*> devices;
  for (const auto& d : trace.at("deviceProperties")) {
    for (const char* key : {"id", "name", "computeMajor", "computeMinor", "numSms", "warpSize", "maxThreadsPerMultiprocessor",
                            "regsPerMultiprocessor", "regsPerBlock", "sharedMemPerMultiprocessor", "sharedMemPerBlockOptin"})
      CHECK_MESSAGE(d.contains(key), key);
    devices[d.at("id").get<int>()] = &d;
  }

  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Span>> tracks;  // by (pid, tid)
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const json*>> open;  // B events awaiting their E
  std::map<std::int64_t, int> flow_starts, flow_ends;
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> external_ranges;  // External id -> host range
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> launches_in;  // External id -> API calls
  std::vector<const json*> flows;
  int steps = 0, memory_events = 0;
  const std::set<std::string> device_categories{"kernel", "gpu_memcpy", "gpu_memset"};
  const std::set<std::string> categories{"user_annotation", "cpu_op", "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset"};
  const auto& events = trace.at("traceEvents");
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& ev = events[i];
    const auto ph = ev.at("ph").get<std::string>();
    REQUIRE_MESSAGE((ph == "X" || ph == "B" || ph == "E" || ph == "M" || ph == "s" || ph == "f" || ph == "i"), ph);
    REQUIRE(ev.contains("name"));  // TensorBoard's reader looks at every event's name
    if (ph == "M") continue;
    if (ph == "i") {
      check_memory_event(ev);
      ++memory_events;
      continue;
    }
    const std::pair track{ev.at("pid").get<std::int64_t>(), ev.at("tid").get<std::int64_t>()};
    const auto start = ns(ev.at("ts").get<double>());
    if (ph == "s" || ph == "f") {
      CHECK(ev.at("cat") == "ac2g");
      (ph == "s" ? flow_starts : flow_ends)[ev.at("id").get<std::int64_t>()] += 1;
      if (ph == "f") CHECK(ev.at("bp") == "e");
      flows.push_back(&ev);
      continue;
    }
    if (ph == "E") {
      auto& stack = open[track];
      REQUIRE_MESSAGE(!stack.empty(), "an E event with no B before it on its track");
      const auto& begin = *stack.back();
      stack.pop_back();
      const auto begin_ns = ns(begin.at("ts").get<double>());
      CHECK(start >= begin_ns);
      CHECK(ev.at("name") == begin.at("name"));
      tracks[track].push_back({begin_ns, start, &begin, true});
      continue;
    }
    for (const char* key : {"name", "cat", "pid", "tid", "ts", "args"}) REQUIRE_MESSAGE(ev.contains(key), key);
    const auto cat = ev.at("cat").get<std::string>();
    CHECK_MESSAGE(categories.count(cat), cat);
    const auto& args = ev.at("args");
    CHECK(args.contains("External id"));
    if (ph == "B") {
      CHECK_FALSE(ev.contains("dur"));
      open[track].push_back(&ev);
    } else {
      const auto length = ns(ev.at("dur").get<double>());
      // Complete events are at least 1 µs, so HTA's rounding never makes them negative.
      CHECK(length >= 1000);
      CHECK(hta_length_us(start, start + length) >= 0);
      tracks[track].push_back({start, start + length, &ev, false});
    }
    const auto name = ev.at("name").get<std::string>();
    if (name.starts_with("ProfilerStep#")) {
      CHECK(cat == "user_annotation");
      ++steps;
    }
    if (cat == "cpu_op" || cat == "user_annotation") {
      CHECK(args.size() == 1);
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      CHECK(args.contains("correlation"));
      if (args.contains("cbid")) CHECK(args.at("cbid").get<int>() > 0);
    } else {
      for (const char* key : {"device", "stream", "correlation"}) CHECK_MESSAGE(args.contains(key), key);
      CHECK(track.first == args.at("device").get<std::int64_t>());
      CHECK(track.second == args.at("stream").get<std::int64_t>());
    }
    if (cat == "gpu_memcpy" || cat == "gpu_memset") {
      CHECK(args.contains("bytes"));
      CHECK(args.contains("memory bandwidth (GB/s)"));
    }
    if (cat == "kernel") {
      for (const char* key : {"registers per thread", "shared memory", "grid", "block", "blocks per SM", "warps per SM",
                              "est. achieved occupancy %", "resident blocks per SM", "resident warps per SM", "theoretical occupancy %",
                              "occupancy limited by"})
        CHECK_MESSAGE(args.contains(key), key);
      // Kineto's meanings: the grid spread over the SMs, and its estimate of achieved occupancy.
      const auto& device = *devices.at(args.at("device").get<int>());
      const auto volume = [](const json& d) { return d.at(0).get<double>() * d.at(1).get<double>() * d.at(2).get<double>(); };
      const double threads = volume(args.at("block"));
      const double blocks_per_sm = volume(args.at("grid")) / device.at("numSms").get<double>();
      CHECK(args.at("blocks per SM").get<double>() == doctest::Approx(blocks_per_sm));
      CHECK(args.at("warps per SM").get<double>() == doctest::Approx(blocks_per_sm * threads / 32));
      const double resident = args.at("resident blocks per SM").get<double>();
      CHECK(args.at("est. achieved occupancy %").get<int>() ==
            std::lround(std::min(resident, blocks_per_sm) * threads / device.at("maxThreadsPerMultiprocessor").get<double>() * 100));
      const double max_warps = device.at("maxThreadsPerMultiprocessor").get<double>() / device.at("warpSize").get<double>();
      CHECK(args.at("theoretical occupancy %").get<double>() ==
            doctest::Approx(args.at("resident warps per SM").get<double>() / max_warps * 100).epsilon(0.001));
    }
    // HTA and TensorBoard tie ops to the calls inside them by External id.
    const auto external = args.at("External id").get<std::int64_t>();
    const auto end = ph == "X" ? start + ns(ev.at("dur").get<double>()) : std::int64_t{-1};
    if (cat == "cpu_op" || cat == "user_annotation") {
      CHECK(external_ranges.count(external) == 0);
      external_ranges[external] = {start, end};
    }
    if ((cat == "cuda_runtime" || cat == "cuda_driver") && external > 0) launches_in[external].push_back({start, end});
  }
  for (const auto& [track, stack] : open) CHECK_MESSAGE(stack.empty(), "a B event with no E");
  CHECK(steps > 0);
  // An experiment whose allocator was traced has its events in the trace, for TensorBoard's memory view.
  for (const auto& e : results.at("experiments"))
    if (e.at("name") == experiment && e.contains("trace") && e.at("trace").contains("allocator_memory")) CHECK(memory_events > 0);

  // Begin/end pairs are events under 1 µs, or a launch and its device work of which one is: HTA,
  // which reads only complete events, then meets neither half of such a pair.
  std::map<std::int64_t, std::vector<const Span*>> by_correlation;
  for (const auto& [track, spans] : tracks)
    for (const auto& s : spans)
      if (s.event->at("args").contains("correlation")) by_correlation[s.event->at("args").at("correlation").get<std::int64_t>()].push_back(&s);
  for (const auto& [track, spans] : tracks)
    for (const auto& s : spans) {
      if (!s.pair || s.end - s.start < 1000) continue;
      INFO("a begin/end pair of 1 µs or more: ", s.event->at("name"));
      REQUIRE(s.event->at("args").contains("correlation"));
      const auto& group = by_correlation.at(s.event->at("args").at("correlation").get<std::int64_t>());
      CHECK(std::any_of(group.begin(), group.end(), [](const Span* g) { return g->end - g->start < 1000; }));
    }
  for (const auto& correlated : by_correlation)  // not a structured binding: CHECK_MESSAGE takes its message into a lambda
    for (const auto* s : correlated.second)
      CHECK_MESSAGE(s->pair == correlated.second.front()->pair, "a launch and its device work written differently: ", correlated.first);

  // Nesting: on each track, spans nest or follow one another, before and after HTA's rounding.
  for (auto& [track, spans] : tracks) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    std::vector<const Span*> stack;
    for (const auto& s : spans) {
      while (!stack.empty() && stack.back()->end <= s.start) stack.pop_back();
      if (!stack.empty()) CHECK_MESSAGE(s.end <= stack.back()->end, "overlapping events on one track: ", s.event->at("name"));
      // Device work does not nest: one kernel, copy or memset at a time on a stream.
      if (device_categories.count(s.event->at("cat").get<std::string>()))
        CHECK_MESSAGE(stack.empty(), "device work overlapping on one stream: ", s.event->at("name"));
      stack.push_back(&s);
    }
  }
  // An API call lies inside the range its External id names.
  for (const auto& [external, calls] : launches_in) {
    REQUIRE(external_ranges.count(external));
    const auto [from, to] = external_ranges.at(external);
    for (const auto& [start, end] : calls) {
      CHECK(start >= from);
      if (to >= 0 && end >= 0) CHECK(end <= to);
    }
  }
  // Flows: one start and one end per id, from the launching call to the device work it queued.
  for (const auto& [id, n] : flow_starts) CHECK(n == 1);
  for (const auto& [id, n] : flow_ends) CHECK(n == 1);
  CHECK(flow_starts.size() == flow_ends.size());
  for (const auto* flow : flows) {
    const auto id = flow->at("id").get<std::int64_t>();
    const auto at = ns(flow->at("ts").get<double>());
    const std::pair track{flow->at("pid").get<std::int64_t>(), flow->at("tid").get<std::int64_t>()};
    const bool launch = flow->at("ph") == "s";
    const auto found = std::any_of(tracks[track].begin(), tracks[track].end(), [&](const Span& s) {
      const auto cat = s.event->at("cat").get<std::string>();
      const bool right_kind = launch ? (cat == "cuda_runtime" || cat == "cuda_driver") : (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset");
      return right_kind && s.start == at && s.event->at("args").at("correlation") == id;
    });
    CHECK_MESSAGE(found, "a flow with no event of its correlation where it starts or ends: ", id);
  }
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every rule over every traced experiment of a run directory; returns how many traces were checked.
int check_run(const fs::path& run, bool has_base_time) {
  const auto results = e2e::read_json(run / "results.json");
  int traces = 0;
  std::set<fs::path> expected;
  for (const auto& e : results.at("experiments")) {
    if (!e.contains("trace_file")) continue;
    const auto name = e.at("name").get<std::string>();
    INFO("experiment ", name);
    // The Chrome trace in a folder of its own, named as TensorBoard looks for it.
    REQUIRE(e.at("chrome_trace") == "traces/" + name + "/expr.pt.trace.json");
    const auto file = run / e.at("chrome_trace").get<std::string>();
    REQUIRE(fs::exists(file));
    CHECK(tensorboard_finds(file));
    // HTA reads every *.json and *.gz of the folder as a rank's trace: this one is alone there.
    int read_by_hta = 0;
    for (const auto& f : fs::directory_iterator(file.parent_path()))
      read_by_hta += f.path().extension() == ".json" || f.path().extension() == ".gz";
    CHECK(read_by_hta == 1);
    expected.insert(file);
    const auto text = slurp(file);
    check_trace(json::parse(text), text, results, name, has_base_time);
    ++traces;
  }
  // Nothing else in the run directory looks like a trace to TensorBoard.
  std::set<fs::path> found;
  for (const auto& f : fs::recursive_directory_iterator(run))
    if (tensorboard_finds(f.path())) found.insert(f.path());
  CHECK(found == expected);
  return traces;
}

fs::path replay(const std::string& recorded) {
  const auto dir = e2e::scratch("tools_" + recorded);
  const auto o = e2e::expr(dir, "replay " + (data / recorded).string() + " --out out");
  INFO(o.all());
  CHECK((o.exit_code == 0 || o.exit_code == 1 || o.exit_code == 3));
  return dir / "out";
}

}  // namespace

TEST_CASE("the recorded H200 runs, replayed, leave Chrome traces TensorBoard and HTA read as they expect") {
  // The probe and series 3 were recorded before expr kept the clock's offset: no
  // baseTimeNanoseconds; the sweep was recorded again after.
  CHECK(check_run(replay("cuda-probe-h200"), false) == 1);
  CHECK(check_run(replay("series3-h200"), false) == 7);
  CHECK(check_run(replay("attention-sweep-h200"), true) == 60);
}

TEST_CASE("events shorter than 1 µs are begin/end pairs, and a rank from the launcher is the trace's distributedInfo" * e2e::runs_experiments) {
  // A range around a sum of 16 numbers: shorter than 1 µs in an optimized build.
  const auto dir = e2e::scratch("tools_short_events");
  e2e::write(dir, "series.yaml", R"(series: short
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 20, min_samples: 3, min_time: 0.01, max_time: 0.1}
experiments:
  - name: tiny
    plugin: faulty
    params: {size: 16}
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run", "RANK=1 WORLD_SIZE=2");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  CHECK(check_run(dir / "run", true) == 1);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  const auto trace = e2e::read_json(dir / "run" / "traces" / "tiny" / "expr.pt.trace.json");
  // As many begin/end pairs as the native trace has ranges under 1 µs: all of them in an optimized
  // build; none in the sanitizer build at -O0, whose range takes 2 µs (the unit test of the
  // export checks the pairs on recorded events under 1 µs whatever the build).
  const auto native = e2e::read_json(dir / "run" / "experiments" / "tiny" / "expr_trace.json");
  const auto& columns = native.at("ranges").at("columns");
  const auto column = [&](const char* name) { return std::find(columns.begin(), columns.end(), name) - columns.begin(); };
  const auto& strings = native.at("strings");
  const auto sum = std::find(strings.begin(), strings.end(), "sum") - strings.begin();
  int short_ranges = 0, pairs = 0;
  for (const auto& row : native.at("ranges").at("rows"))
    short_ranges += row.at(column("name")) == sum && row.at(column("end")).get<std::int64_t>() - row.at(column("start")).get<std::int64_t>() < 1000;
  for (const auto& ev : trace.at("traceEvents")) pairs += ev.at("ph") == "B" && ev.at("name") == "sum";
  CHECK(pairs == short_ranges);
  CHECK(trace.at("distributedInfo") == json{{"rank", 1}, {"world_size", 2}});
  // The base is the first record's Unix time: within the run's own start and end.
  const auto unix_seconds = [](const std::string& utc) {
    std::tm tm{};
    std::istringstream(utc) >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
    return static_cast<double>(timegm(&tm));
  };
  const double base = trace.at("baseTimeNanoseconds").get<double>() * 1e-9;
  CHECK(base >= unix_seconds(results.at("started")) - 1);
  CHECK(base <= unix_seconds(results.at("finished")) + 1);
}

#ifdef EXPR_CPU_SERIES
TEST_CASE("the CPU series leaves Chrome traces TensorBoard and HTA read as they expect") {
  CHECK(check_run(fs::path(EXPR_E2E_WORK_DIR) / "cpu_series" / "run", true) == 2);
}
#endif
