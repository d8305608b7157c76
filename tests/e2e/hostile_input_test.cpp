// Hostile input and faults: values at the edges of what a number or a file name holds, files
// that are not what they claim, plugins with text that is not UTF-8 or a hunger for memory. What
// `expr validate` can know gets one clear message and exit 2 before anything runs; what happens
// later loses no measurement; nothing crashes expr itself.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <chrono>
#include <functional>
#include <string>

#include "harness.hpp"

namespace fs = std::filesystem;

namespace {

e2e::Outcome validate(const std::string& name, const std::string& text) {
  const auto dir = e2e::scratch("hostile_" + name);
  e2e::write(dir, "series.yaml", text);
  return e2e::expr(dir, "validate series.yaml");
}

using e2e::has;

// AddressSanitizer maps terabytes of shadow memory that RLIMIT_DATA counts, so under it (preset
// asan) no memory limit can be set.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool under_asan = true;
#elif defined(__has_feature)
constexpr bool under_asan = __has_feature(address_sanitizer);
#else
constexpr bool under_asan = false;
#endif

// A series of one experiment of the faulty plugin, with `settings` under the experiment.
std::string one_experiment(const std::string& settings) {
  return "series: x\nexperiments:\n  - name: sums\n    plugin: faulty\n" + settings;
}

}  // namespace

TEST_CASE("a duration or fraction beyond what a number holds is an error at its place") {
  const auto o = validate("huge_numbers", one_experiment("    timeout: 1e309\n    iterations: {min_time: 1e309s, max_noise: 1e999%}\n"));
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:14: error: timeout '1e309' is out of range: timeout must be a time in seconds (e.g. 2, 2s, 500ms) "
               "between 0.001 and 86400"));
  CHECK(has(o, "series.yaml:6:28: error: min_time '1e309s' is out of range"));
  CHECK(has(o, "series.yaml:6:47: error: max_noise '1e999%' is out of range: max_noise must be a fraction"));
}

TEST_CASE("timing settings the runner cannot honour are errors") {
  const auto o = validate("inconsistent_timing", R"(series: x
defaults:
  iterations: {min_time: 5s, max_time: 1s}
experiments:
  - name: sums
    plugin: faulty
    timeout: 2s
  - name: more
    plugin: faulty
    iterations: {max_time: 10s, warmup: -1, traced: -3}
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:3:26: error: min_time (5 s) is above max_time (1 s); timing stops at max_time"));
  CHECK(has(o, "series.yaml:7:14: error: timeout (2 s) must be longer than twice max_time (1 s)"));
  CHECK(has(o, "series.yaml:10:29: error: timeout (300 s) must be longer than twice max_time (10 s)") == false);
  CHECK(has(o, "series.yaml:10:41: error: warmup must be a whole number between 0 and 1000000"));
  CHECK(has(o, "series.yaml:10:53: error: traced must be a whole number between 0 and 10000"));
}

TEST_CASE("a series file that is not UTF-8 is an error at the first bad byte") {
  const auto o = validate("latin1", "series: x\ndescription: caf\xe9\nexperiments:\n  - name: sums\n    plugin: faulty\n");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:2:17: error: byte 0xe9 is not UTF-8: a series file is UTF-8 text"));
}

TEST_CASE("a guess's reason that is not UTF-8 is found before anything runs" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("hostile_latin1_why");
  e2e::write(dir, "series.yaml", one_experiment("    expect:\n      - check: kernels == 0\n        why: na\xefve\n"));
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:7:16: error: byte 0xef is not UTF-8"));
  CHECK_FALSE(fs::exists(dir / "run"));
}

TEST_CASE("names too long for a file name are refused with the limit") {
  const std::string long_name(256, 'x');
  const auto o = validate("long_names", "series: " + std::string(240, 's') + "\nexperiments:\n  - name: " + long_name +
                                            "\n    plugin: faulty\n");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:1:9: error: the series name is 240 bytes long; the run directory is named after it, and with the "
               "time stamp it must fit in a file name: at most 239 bytes"));
  CHECK(has(o, "series.yaml:3:11: error: experiment name 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' is 256 bytes long; its folder in "
               "the run directory is named after it, and a file name holds at most 255 bytes"));

  // A name of 26,000 characters overflowed the stack of `expr validate` (SIGSEGV): its identifier
  // check was a std::regex, which recurses once per character.
  const auto huge = validate("huge_name", "series: x\nexperiments:\n  - name: " + std::string(26000, 'y') + "\n    plugin: faulty\n");
  INFO(huge.err.substr(0, 2000));
  CHECK(huge.exit_code == 2);
  CHECK(has(huge, "series.yaml:3:11: error: experiment name 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy…' is 26000 bytes long"));
  CHECK(has(huge, "1 problem in series.yaml; nothing ran"));
}

TEST_CASE("a key written as a list or mapping is an error, not a crash") {
  const auto o = validate("complex_key", "series: x\n? [a, b]\n: 1\nexperiments:\n  - name: sums\n    plugin: faulty\n    params: {{size: 1}: 2}\n");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:2:3: error: a key must be a single word, not a list or mapping"));
  CHECK(has(o, "series.yaml:7:14: error: a key must be a single word, not a list or mapping"));
}

TEST_CASE("a number of 30,000 digits gets one short message at its place") {
  const std::string digits(30000, '1');
  const auto quoted = std::string(40, '1') + "…";
  // Read with the file: a time.
  auto o = validate("long_timeout", one_experiment("    timeout: " + digits + "\n"));
  INFO(o.err.substr(0, 4000));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:14: error: timeout '" + quoted + "' is out of range: timeout must be a time in seconds"));
  CHECK(has(o, "1 problem in series.yaml; nothing ran"));
  CHECK(o.err.size() < 1000);  // the message does not repeat the number whole
  // Checked against the plugin: a parameter.
  o = validate("long_param", one_experiment("    params: {size: " + digits + "}\n"));
  INFO(o.err.substr(0, 4000));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:20: error: parameter 'size' is a whole number, not '" + quoted + "'\n"));
  CHECK(o.err.size() < 1000);
}

TEST_CASE("sweep values and guesses of 200,000 digits are read by hand, not a crash") {
  // Each of these overflowed the stack of `expr validate` (SIGSEGV), and each key written as a
  // list aborted it with an uncaught yaml-cpp exception. Reading the file finds the first three.
  const std::string digits(200000, '1');
  const auto quoted = std::string(40, '1') + "…";
  auto o = validate("long_sweep_values", "series: x\nexperiments:\n"
                                         "  - name: generated\n    plugin: faulty\n"
                                         "    axes: {size: [\"range(1, 2, " + digits + ")\"]}\n"
                                         "  - name: keyed\n    plugin: faulty\n    axes: {[size]: [1, 2]}\n"
                                         "    exclude: [{[size]: 1}]\n");
  INFO(o.err.substr(0, 4000));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:19: error: an argument of range() must be a whole number, not '" + quoted + "'\n"));
  CHECK(has(o, "series.yaml:8:12: error: a key must be a single word, not a list or mapping\n"));
  CHECK(has(o, "series.yaml:9:16: error: a key must be a single word, not a list or mapping\n"));
  CHECK(has(o, "3 problems in series.yaml; nothing ran"));

  // Expanding the sweep finds the fourth, compiling its guesses the fifth.
  const std::string sweep = "series: x\nexperiments:\n  - name: swept\n    plugin: faulty\n    axes: {size: [1, 2]}\n";
  o = validate("long_exclusion", sweep + "    exclude: [{size: \">" + digits + "\"}]\n");
  INFO(o.err.substr(0, 4000));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:6:22: error: parameter 'size' is a whole number, not '" + quoted + "'\n"));
  o = validate("long_sweep_guess", sweep + "    sweep_expect:\n      - " + std::string(200000, 'a') + "(host_time, size) ~ 1 ± 1\n");
  INFO(o.err.substr(0, 4000));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:7:1009: error: this guess is 200026 bytes long; the limit is 1000\n"));
}

TEST_CASE("sweeps of millions of points are refused before a point is made, whatever max_points allows") {
  // The fuzzer's find: one range of 4 million values took more than 10 s to refuse.
  auto o = validate("long_range", one_experiment("    axes:\n      size: range(0 ,8110001, 2)\n"));
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:6:13: error: 'range(0 ,8110001, 2)' expands to 4055001 values, more than max_points (10000)"));
  o = validate("whole_range", one_experiment("    axes:\n      size: range(-9223372036854775808, 9223372036854775807, 1)\n"));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "expands to 2^64 values"));
  // A range that ends next to the largest whole number takes its values without overflowing.
  o = validate("range_at_the_edge", one_experiment("    axes:\n      size: range(9223372036854775800, 9223372036854775807, 5)\n"));
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "sums[size=9223372036854775800]\n  sums[size=9223372036854775805]\n"));
  // Two axes within the limit each, whose product is not.
  o = validate("product", one_experiment("    axes:\n      size: range(1, 6000, 1)\n      fault: [none, wrong_result]\n"));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "the axes of sums combine into more than max_points (10000) points before exclusions"));
  o = validate("ceiling", "max_points: 2000000\n" + one_experiment(""));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "max_points"));
  CHECK(has(o, "1000000"));
}

TEST_CASE("a series path that is a directory or missing says so" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("hostile_paths");
  fs::create_directories(dir / "folder.yaml");
  auto o = e2e::expr(dir, "validate folder.yaml");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "folder.yaml: error: is a directory, not a series file"));
  o = e2e::expr(dir, "run nowhere.yaml");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "nowhere.yaml: error: cannot open the series file: No such file or directory"));
}

TEST_CASE("a number parameter that is not finite is an error at its value") {
  // It used to reach the plugin, and its result, with NaN as JSON null, ended the whole run.
  const auto o = validate("nan_param", R"(series: x
experiments:
  - name: a
    plugin: greedy
    params: {touch: nan}
  - name: b
    plugin: greedy
    params: {touch: 1e999}
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:21: error: parameter 'touch' is a finite number, not 'nan'"));
  CHECK(has(o, "series.yaml:8:21: error: parameter 'touch' is a finite number, not '1e999'"));
}

TEST_CASE("a memory limit is read as a size") {
  const auto o = validate("memory_values", R"(series: x
defaults:
  memory: 8GiB
experiments:
  - name: sums
    plugin: faulty
    memory: 8 gigs
  - name: more
    plugin: faulty
    memory: 1e400GiB
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:7:13: error: memory must be a size such as 8GiB or 512MiB (units B, KiB, MiB, GiB, TiB) between 1 MiB and 1024 TiB"));
  CHECK(has(o, "series.yaml:10:13: error: memory must be a size"));
  CHECK_FALSE(has(o, "series.yaml:3:"));
}

TEST_CASE("an experiment that exceeds its memory limit fails with that reason and keeps what it measured" *
          doctest::skip(under_asan || !e2e::has_runner)) {
  const auto dir = e2e::scratch("hostile_memory");
  e2e::write(dir, "series.yaml", R"(series: memory
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}
  memory: 512MiB
experiments:
  - name: hungry
    plugin: greedy
    params: {bytes: 4294967296}
  - name: modest
    plugin: greedy
    params: {bytes: 1048576}
  - name: careless
    plugin: greedy
    params: {bytes: 4294967296, unchecked: true}
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 3);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  const auto& hungry = e2e::experiment(results, "hungry");
  CHECK(hungry.at("status") == "failed");
  CHECK(hungry.at("reason").get<std::string>().starts_with("exceeded its memory limit of 512 MiB (warm-up: "));
  CHECK(hungry.at("timing").contains("first_call_ns"));
  CHECK(e2e::experiment(results, "modest").at("status") == "ok");
  // malloc's null written through: a crash, and the reason names the limit that refused the memory.
  const auto& careless = e2e::experiment(results, "careless");
  CHECK(careless.at("status") == "crashed");
  CHECK(has(careless.at("reason").get<std::string>(), "was killed by SIGSEGV (Segmentation fault) during warm-up (it ran under a memory limit of 512 MiB: "));
}

TEST_CASE("text from a plugin that is not UTF-8 does not cost the results" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("hostile_garbled");
  e2e::write(dir, "series.yaml", R"(series: garbled
defaults:
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1}
experiments:
  - name: garbled
    plugin: garbled
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  const auto& garbled = e2e::experiment(results, "garbled");
  CHECK(garbled.at("status") == "ok");
  CHECK(garbled.at("facts").at("drink") == "caf\xef\xbf\xbd");  // the Latin-1 é replaced by U+FFFD
  CHECK(e2e::guess(garbled, "ranges(\"^r\") == 1").at("verdict") == "confirmed");
}

TEST_CASE("a symbolic link loop on the plugin path is a clear error, not an abort") {
  const auto dir = e2e::scratch("hostile_symlink_loop");
  fs::create_directories(dir / "plugins");
  fs::create_symlink("loop.so", dir / "plugins" / "loop.so");
  fs::create_symlink("looping", dir / "looping");  // a plugin_path entry that is a loop itself
  e2e::write(dir, "series.yaml", "series: x\nplugin_path: [plugins, looping]\nexperiments:\n  - name: a\n    plugin: loop\n"
                                 "  - name: b\n    plugin: nowhere\n");
  auto o = e2e::expr(dir, "validate series.yaml");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "loop.so: not a loadable shared library: cannot be read: Too many levels of symbolic links"));
  CHECK(has(o, "looping (Too many levels of symbolic links)"));
  o = e2e::expr(dir, "list --plugin-path plugins");
  CHECK(o.exit_code == 2);
  CHECK(o.out.find("faulty — ") != std::string::npos);
}

TEST_CASE("a damaged library on the plugin path is refused before it is loaded, naming what is wrong") {
  const auto o = validate("damaged_libraries", R"(series: x
experiments:
  - {name: a, plugin: truncated}
  - {name: b, plugin: stub}
  - {name: c, plugin: elf32}
  - {name: d, plugin: foreign}
  - {name: e, plugin: executable}
)");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "truncated.so: not a loadable shared library: truncated or damaged: its section header table does not lie inside the file (8192 bytes)"));
  CHECK(has(o, "stub.so: not a loadable shared library: 32 bytes is too short for an ELF header"));
  CHECK(has(o, "elf32.so: not a loadable shared library: not a 64-bit ELF file"));
  CHECK(has(o, "foreign.so: not a loadable shared library: built for another machine (ELF machine 183, this one is 62)"));
  CHECK(has(o, "executable.so: not a loadable shared library: not a shared library (ELF type 2)"));
  // `expr list` opens every library on the path: it names the damaged ones and lists the rest.
  const auto list = e2e::expr(e2e::scratch("hostile_damaged_list"), "list");
  INFO(list.all());
  CHECK(list.exit_code == 2);
  CHECK(list.out.find("faulty — ") != std::string::npos);
  CHECK(list.err.find("truncated.so: not a loadable shared library") != std::string::npos);
}

TEST_CASE("a recorded trace with numbers or references out of range is refused by replay, naming the row") {
  // Found by fuzz_trace: a float where a whole number belongs was undefined behaviour; a name past
  // the string table or a range that is its own parent sent `expr replay` out of bounds or round
  // in circles.
  const fs::path recorded = fs::path(EXPR_SOURCE_DIR) / "tests/data/cuda-probe-h200";
  const auto replay_with = [&](const std::string& name, const std::function<void(nlohmann::json&)>& damage) {
    const auto dir = e2e::scratch("hostile_trace_" + name);
    fs::copy(recorded, dir / "run", fs::copy_options::recursive);
    const auto trace_file = dir / "run/experiments/probe/expr_trace.json";
    auto trace = e2e::read_json(trace_file);
    damage(trace);
    std::ofstream(trace_file) << trace.dump();
    return e2e::expr(dir, "replay run");
  };
  auto o = replay_with("float", [](auto& t) { t["ranges"]["rows"][0][3] = 1.23e125; });
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "expr_trace.json: ranges: 1.23e+125 is not a whole number in the range of its field"));
  o = replay_with("name", [](auto& t) { t["kernels"]["rows"][0][0] = 4000000000u; });
  CHECK(o.exit_code == 2);
  CHECK(has(o, "expr_trace.json: kernels row 1: string 4000000000 is not in the string table"));
  o = replay_with("parent", [](auto& t) { t["ranges"]["rows"][1][5] = 1; });
  CHECK(o.exit_code == 2);
  CHECK(has(o, "expr_trace.json: ranges row 2: parent 1 is not a range opened before it"));
}

TEST_CASE("pow2() is counted before a value is made: an end near 2^63 is taken, a bound below 1 refused, nothing hangs" * e2e::runs_experiments) {
  // pow2 doubled until it passed its end: at or above 2^62 the doubling overflowed and never did.
  const auto dir = e2e::scratch("hostile_pow2");
  e2e::write(dir, "series.yaml", one_experiment("    axes:\n      size: pow2(4611686018427387904, 9223372036854775807)\n"));
  auto o = e2e::start(dir, "validate series.yaml").wait(std::chrono::seconds(60));
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "sums[size=4611686018427387904]\n"));
  o = e2e::start(dir, "run series.yaml --no-history --dry-run --axis size=pow2(1,9223372036854775807)").wait(std::chrono::seconds(60));
  CHECK(o.exit_code == 0);
  CHECK(has(o.out, "sums[size=1]\n"));
  CHECK(has(o.out, "sums[size=4611686018427387904]\n"));
  o = validate("pow2_negative", one_experiment("    axes:\n      size: pow2(-8, 8)\n"));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:6:13: error: the bounds of pow2() must be positive: 'pow2(-8, 8)' has start -8"));
  o = validate("pow2_zero_end", one_experiment("    axes:\n      size: pow2(1, 0)\n"));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "'pow2(1, 0)' has stop 0"));
}

TEST_CASE("a plugin whose static constructor crashes, exits or blocks is an error naming it, not the end of expr" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("hostile_constructors");
  const auto series = [&](const std::string& plugin) {
    return e2e::write(dir, plugin + ".yaml", "series: x\nplugin_path: " EXPR_TEST_HOSTILE_PLUGIN_DIR "\nexperiments:\n  - name: a\n    plugin: " + plugin + "\n");
  };
  const std::string library = EXPR_TEST_HOSTILE_PLUGIN_DIR "/";
  // Long enough for a LibTorch plugin on the path (`expr list` opens them) on a busy machine.
  const std::string timeout = "EXPR_PLUGIN_LOAD_TIMEOUT=10";
  const auto refused = [&](const std::string& plugin, const std::string& command, const std::string& what) {
    series(plugin);
    const auto o = e2e::start(dir, command, timeout).wait(std::chrono::seconds(120));
    INFO(command, "\n", o.all());
    CHECK(o.exit_code == 2);
    CHECK(has(o, plugin + ".yaml:5:13: error: " + library + plugin + ".so: opening it " + what));
  };
  for (const std::string command : {"validate", "run --no-history"}) {
    refused("constructor_crashes", command + " constructor_crashes.yaml",
            "killed the process with signal 11 (Segmentation fault): a static constructor or describe() crashed");
    refused("constructor_exits", command + " constructor_exits.yaml",
            "ended the process with exit code 7: a static constructor or describe() called exit");
    refused("constructor_blocks", command + " constructor_blocks.yaml", "did not finish within 10 s: a static constructor or describe() blocks");
  }
  CHECK_FALSE(fs::exists(dir / "runs"));
  // `expr list` opens every library on the path: it names the three and goes on.
  const auto list = e2e::start(dir, "list --plugin-path " EXPR_TEST_HOSTILE_PLUGIN_DIR, timeout).wait(std::chrono::seconds(120));
  INFO(list.all());
  CHECK(list.exit_code == 2);
  for (const auto* plugin : {"constructor_crashes", "constructor_exits", "constructor_blocks"}) CHECK(has(list, library + plugin + ".so: opening it "));
  CHECK(list.out.find("faulty — ") != std::string::npos);
}

TEST_CASE("a plugin that prints without end fills no disk: its worker.log stops at the cap and says what it dropped" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("hostile_chatty");
  e2e::write(dir, "series.yaml", one_experiment("    params: {print_mib: 20}\n    iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, "
                                                "max_time: 0.1}\n"));
  const auto o = e2e::expr(dir, "run series.yaml --no-history --out run");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  CHECK(e2e::experiment(e2e::read_json(dir / "run/results.json"), "sums").at("status") == "ok");
  const auto log = dir / "run/experiments/sums/worker.log";
  CHECK(fs::file_size(log) < (std::uintmax_t{16} << 20) + 4096);
  const auto text = e2e::read_text(log);
  CHECK(has(text.substr(text.size() - 200), " more bytes of this worker's output were dropped: its log keeps the first 16 MiB]\n"));
}

TEST_CASE("what YAML reads quietly in a series is an error at its place: a key twice, a second document, a default no plugin takes") {
  auto o = validate("duplicate_keys", "series: x\nexperiments:\n  - name: sums\n    plugin: faulty\n    params: {size: 8, size: 16}\n    timeout: 60\n    timeout: 90\n");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:23: error: key 'size' is given twice in this mapping (first on line 5); YAML allows each key once"));
  CHECK(has(o, "series.yaml:7:5: error: key 'timeout' is given twice in this mapping (first on line 6)"));
  o = validate("two_documents", one_experiment("") + "---\nseries: y\n");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:5:1: error: a second YAML document: a series file holds one series"));
  // The fuzzer's find while looking for them: yaml-cpp's LoadAll never returned on this input.
  const auto dir = e2e::scratch("hostile_load_all");
  fs::copy_file(fs::path(EXPR_SOURCE_DIR) / "fuzz/known/series/load-all-loop", dir / "series.yaml");
  o = e2e::start(dir, "validate series.yaml").wait(std::chrono::seconds(60));
  CHECK(o.exit_code == 2);
  // The new plugin author's first typo: the same key under an experiment's params was caught.
  o = validate("default_typo", "series: x\ndefaults:\n  params: {sise: 2048}\nexperiments:\n  - name: sums\n    plugin: faulty\n");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "series.yaml:3:12: error: no plugin of the series has a parameter 'sise', so this parameter of the defaults applies to "
               "nothing; did you mean 'size'? (parameters: fault, size, print_mib)"));
  // A transposition is one edit: "fsued" is close to "fused".
  o = validate("transposed", one_experiment("    params: {fault: nnoe}\n"));
  CHECK(o.exit_code == 2);
  CHECK(has(o, "did you mean 'none'?"));
}

TEST_CASE("a results.json that is a directory, --out '' and --device cuda without a GPU each say what is wrong" * e2e::runs_experiments) {
  const auto dir = e2e::scratch("hostile_unclear");
  fs::create_directories(dir / "run/results.json");
  auto o = e2e::expr(dir, "show run");
  INFO(o.all());
  CHECK(o.exit_code == 2);
  CHECK(has(o, "run/results.json: is a directory, not a results file"));
  fs::remove_all(dir / "run");  // the suite's schema check reads every results.json under its work folder
  e2e::write(dir, "series.yaml", one_experiment(""));
  o = e2e::expr(dir, "run series.yaml --no-history --out ''");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "error: --out '' names no directory; name one"));
  // Every experiment would be skipped, and the run would pass having measured nothing.
  o = e2e::expr(dir, "run series.yaml --no-history --device cuda --out gpu", "CUDA_VISIBLE_DEVICES=");
  CHECK(o.exit_code == 2);
  CHECK(has(o, "error: --device cuda: there is no CUDA device here"));
  CHECK_FALSE(fs::exists(dir / "gpu"));
}
