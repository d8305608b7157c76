// The CPU series end to end: the real masked_fill plugin through LibTorch, its op trace, the
// verdicts, the files a run leaves, and what show, replay, list and --filter do with them.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "harness.hpp"

namespace fs = std::filesystem;
using e2e::guess;
using e2e::experiment;

namespace {
const std::string cpu_series = EXPR_SOURCE_DIR "/tests/series/cpu.yaml";

// The run made once by the ctest fixture "cpu_series" (tests/e2e/CMakeLists.txt), which also
// checks that `expr run` exits with 0: LibTorch plugins take seconds to load.
fs::path cpu_run() {
  const auto dir = fs::path(EXPR_E2E_WORK_DIR) / "cpu_series" / "run";
  REQUIRE(fs::exists(dir / "results.json"));
  return dir;
}
}  // namespace

TEST_CASE("the CPU series confirms the hidden clone of out-of-place masked_fill from the op trace") {
  const auto results = e2e::read_json(cpu_run() / "results.json");
  CHECK(results.at("schema") == "expr.results/2");
  CHECK(!results.at("run").at("id").get<std::string>().empty());
  const auto& naive = experiment(results, "naive");
  const auto& inplace = experiment(results, "naive_inplace");
  CHECK(naive.at("status") == "ok");
  CHECK(inplace.at("status") == "ok");
  CHECK(naive.at("device") == "cpu");

  // The plugin's own guesses, checked against the ATen op trace.
  CHECK(guess(naive, "ops(\"^aten::clone$\") == 1").at("verdict") == "confirmed");
  CHECK(guess(inplace, "ops(\"^aten::clone$\") == 0").at("verdict") == "confirmed");
  // The series' guesses, one of them comparing the two experiments.
  const auto& extra_copy = guess(naive, "ops(\"^aten::copy_$\") == naive_inplace.ops(\"^aten::copy_$\") + 1");
  CHECK(extra_copy.at("verdict") == "confirmed");
  CHECK(extra_copy.at("evidence").get<std::string>().find("aten::copy_") != std::string::npos);
  CHECK(guess(inplace, "ops < naive.ops").at("verdict") == "confirmed");

  // Device-only guesses are never passed silently on a CPU run.
  const auto& dtod = guess(inplace, "copies(kind=DtoD) == 0");
  CHECK(dtod.at("verdict") == "not evaluable");
  CHECK(dtod.at("reason").get<std::string>().find("needs device tracing") != std::string::npos);

  // Correctness against the float64 reference and timings are recorded.
  CHECK(naive.at("correctness").at(0).at("ok") == true);
  CHECK(naive.at("timing").at("host").at("count").get<int>() >= 10);
  // Every raw sample is kept, for comparisons between runs.
  CHECK(naive.at("timing").at("host").at("samples_ns").size() == naive.at("timing").at("host").at("count").get<std::size_t>());
  CHECK(naive.at("timing").at("first_call_ns").get<double>() > 0);
  CHECK(results.at("environment").at("libtorch").get<std::string>().size() > 0);
}

TEST_CASE("experiments with the same inputs share one float64 reference, and the run removes it") {
  const auto results = e2e::read_json(cpu_run() / "results.json");
  const auto error = [&](const char* name) { return experiment(results, name).at("correctness").at(0).at("relative_error").get<double>(); };
  // naive computes the reference and leaves it; naive_inplace, the same shape, reads it and compares
  // on the host. Their outputs are the same, and so are their errors, summed in another order.
  const auto read_line = "float64 reference read from the run's shared directory";
  CHECK(e2e::read_text(cpu_run() / "experiments" / "naive" / "worker.log").find(read_line) == std::string::npos);
  CHECK(e2e::read_text(cpu_run() / "experiments" / "naive_inplace" / "worker.log").find(read_line) != std::string::npos);
  CHECK(error("naive_inplace") == doctest::Approx(error("naive")).epsilon(1e-9));
  CHECK(error("naive") > 0);
  // The shared directory was made in the run's TMPDIR and is gone with it.
  for (const auto& entry : fs::directory_iterator(cpu_run().parent_path() / "tmp"))
    CHECK_MESSAGE(!entry.path().filename().string().starts_with("expr-shared-"), entry.path().string());
}

TEST_CASE("each experiment leaves a Chrome trace Perfetto can open, with ops nested in iterations") {
  const auto chrome = e2e::read_json(cpu_run() / "traces" / "naive" / "expr.pt.trace.json");
  REQUIRE(chrome.at("traceEvents").is_array());
  int steps = 0, clones = 0;
  double step_start = 0, step_end = 0;
  for (const auto& ev : chrome.at("traceEvents")) {
    if (ev.at("ph") != "X" && ev.at("ph") != "B") continue;  // complete events, or the beginning of one under 1 µs
    for (const char* key : {"ts", "pid", "tid", "name", "cat"}) REQUIRE(ev.contains(key));
    if (ev.at("name") == "ProfilerStep#0") {
      ++steps;
      step_start = ev.at("ts");
      step_end = step_start + ev.at("dur").get<double>();
    }
    if (ev.at("name").get<std::string>().starts_with("ProfilerStep#")) CHECK(ev.at("cat") == "user_annotation");
    if (ev.at("name") == "aten::clone") {
      ++clones;
      CHECK(ev.at("cat") == "cpu_op");
    }
  }
  CHECK(steps == 1);
  CHECK(clones == 3);  // one per traced iteration
  CHECK(step_end > step_start);
}

TEST_CASE("show prints the stored report and replay reaches the same verdicts from the recorded traces") {
  const auto dir = e2e::scratch("show_replay");
  fs::copy(cpu_run(), dir / "run", fs::copy_options::recursive);
  const auto shown = e2e::expr(dir, "show run");
  INFO(shown.all());
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("Guess vs trace: 7 confirmed, 0 contradicted, 3 not evaluable") != std::string::npos);
  CHECK(shown.out.find("traces:  run/traces (Perfetto, TensorBoard, HTA") != std::string::npos);

  const auto replayed = e2e::expr(dir, "replay run --out replayed");
  INFO(replayed.all());
  CHECK(replayed.exit_code == 0);
  const auto a = e2e::read_json(dir / "run" / "results.json");
  const auto b = e2e::read_json(dir / "replayed" / "results.json");
  for (const auto& name : {"naive", "naive_inplace"}) {
    const auto& xa = e2e::guesses(experiment(a, name));
    const auto& xb = e2e::guesses(experiment(b, name));
    REQUIRE(xa.size() == xb.size());
    for (std::size_t i = 0; i < xa.size(); ++i) {
      CHECK(xa[i].at("check") == xb[i].at("check"));
      CHECK(xa[i].at("verdict") == xb[i].at("verdict"));
      CHECK(xa[i].value("observed", "") == xb[i].value("observed", ""));
    }
  }
  CHECK(fs::exists(dir / "replayed" / "traces" / "naive" / "expr.pt.trace.json"));
  CHECK(fs::exists(dir / "replayed" / "expr.log"));
}

TEST_CASE("the run directory holds a Markdown summary and a JUnit report") {
  std::ifstream md(cpu_run() / "summary.md");
  const std::string summary((std::istreambuf_iterator<char>(md)), {});
  CHECK(summary.find("## Experiments side by side") != std::string::npos);
  CHECK(summary.find("naive_inplace") != std::string::npos);
  std::ifstream xml(cpu_run() / "junit.xml");
  const std::string junit((std::istreambuf_iterator<char>(xml)), {});
  CHECK(junit.find("<testsuites name=\"cpu_masked_fill\"") != std::string::npos);
  CHECK(junit.find("failures=\"0\"") != std::string::npos);
}

TEST_CASE("--filter runs only the matching experiments and records the others as skipped") {
  const auto dir = e2e::scratch("filter");
  const auto o = e2e::expr(dir, "run " + cpu_series + " --out run --filter inplace");
  INFO(o.all());
  const auto results = e2e::read_json(dir / "run" / "results.json");
  CHECK(experiment(results, "naive_inplace").at("status") == "ok");
  CHECK(experiment(results, "naive").at("status") == "skipped");
  CHECK(experiment(results, "naive").at("reason") == "filtered out by --filter");
  // A guess that reads the skipped experiment cannot be judged, and says why.
  const auto& cross = guess(experiment(results, "naive_inplace"), "ops < naive.ops");
  CHECK(cross.at("verdict") == "not evaluable");
  CHECK(cross.at("reason").get<std::string>().find("filtered out") != std::string::npos);
}

TEST_CASE("list shows each plugin with its parameters, types and defaults") {
  const auto dir = e2e::scratch("list");
  const auto o = e2e::expr(dir, "list");
  INFO(o.all());
  CHECK(o.out.find("masked_fill — naive causal attention") != std::string::npos);
  CHECK(o.out.find("inplace (bool, default false)") != std::string::npos);
  CHECK(o.out.find("dtype (string, default bf16) one of bf16|fp16|fp32|fp64") != std::string::npos);
  CHECK(o.out.find("faulty") != std::string::npos);
}

TEST_CASE("an experiment pinned to cuda on a machine without a visible GPU is skipped with the reason") {
  const auto dir = e2e::scratch("no_gpu");
  e2e::write(dir, "series.yaml", R"(series: needs_gpu
experiments:
  - name: on_gpu
    plugin: masked_fill
    device: cuda
    params: {batch: 1, heads: 1, seq: 16, head_dim: 8, dtype: fp32}
    expect: [kernels == 5]
  - name: on_cpu
    plugin: masked_fill
    device: cpu
    params: {batch: 1, heads: 1, seq: 16, head_dim: 8, dtype: fp32}
)");
  const auto o = e2e::expr(dir, "run series.yaml --out run", "CUDA_VISIBLE_DEVICES=");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  const auto results = e2e::read_json(dir / "run" / "results.json");
  const auto& gpu = experiment(results, "on_gpu");
  CHECK(gpu.at("status") == "skipped");
  CHECK(gpu.at("reason").get<std::string>().find("cuda") != std::string::npos);
  CHECK(guess(gpu, "kernels == 5").at("verdict") == "not evaluable");
  CHECK(experiment(results, "on_cpu").at("status") == "ok");
}
