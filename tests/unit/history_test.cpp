// The structure of a trace and the comparison of two runs, on series 3 as recorded on the H200
// (tests/data/series3-h200): masked_fill out of place against in place is the regression the gate
// must catch by its cause, a device-to-device copy, whatever the timing says. And what a timing
// keeps of its rounds, through results.json and the history.
#include <doctest/doctest.h>

#include <filesystem>

#include "history/compare.hpp"
#include "history/store.hpp"
#include "outcome/measurement_json.hpp"
#include "report/run_directory.hpp"

using namespace expr;

namespace {

const report::RunResult& series3() {
  static const auto run = report::RunDirectory(EXPR_SOURCE_DIR "/tests/data/series3-h200").read();
  return run;
}

// The recorded experiment `name` as the history keeps it, under the identity `as`.
history::ExperimentRecord recorded(const std::string& name, const std::string& as) {
  auto e = history::snapshot(*series3().find(name));
  e.identity = as;
  return e;
}

// A run of one experiment, in the recorded environment.
history::RunRecord run_of(const std::string& id, history::ExperimentRecord e) {
  history::RunRecord r;
  r.id = id;
  r.series = "series3";
  r.series_file = "experiments/series3.yaml";
  r.environment = series3().environment;
  r.experiments.push_back(std::move(e));
  return r;
}

std::string text(const std::variant<double, std::string>& v) {
  return std::holds_alternative<double>(v) ? std::to_string(std::get<double>(v)) : std::get<std::string>(v);
}

}  // namespace

TEST_CASE("the structure of a recorded trace names the copy out-of-place masked_fill adds, and what issued it") {
  const auto naive = recorded("naive", "naive").structure;
  REQUIRE(naive.device_traced);
  REQUIRE(naive.ops_traced);
  const auto* dtod = naive.find("copies DtoD");
  REQUIRE(dtod);
  CHECK(std::get<double>(dtod->value) == 1);
  CHECK(dtod->detail == "256 MiB each, issued by aten::copy_ in aten::clone in aten::masked_fill");
  CHECK(std::get<double>(naive.find("kernels")->value) == 5);
  CHECK(std::get<std::string>(naive.find("main kernel launch API")->value) == "cudaLaunchKernel");

  const auto inplace = recorded("naive_inplace", "naive").structure;
  CHECK(!inplace.find("copies DtoD"));
  CHECK(inplace.covers("copies DtoD"));  // traced on the device: no DtoD copy is zero of them
  CHECK(!inplace.find("op aten::clone"));

  const auto flash = recorded("sdpa_flash", "sdpa_flash").structure;
  CHECK(text(flash.find("main kernel")->value) == "pytorch_flash::flash_fwd_kernel");
  CHECK(std::get<double>(flash.find("main kernel occupancy")->value) == doctest::Approx(0.125));
  CHECK(text(flash.find("main kernel footprint")->value).find("block 128, 255 registers") != std::string::npos);
}

TEST_CASE("masked_fill out of place against in place: the DtoD copy is a structural regression with its cause") {
  const auto base = run_of("inplace", recorded("naive_inplace", "naive"));
  const auto candidate = run_of("out_of_place", recorded("naive", "naive"));
  const auto c = history::compare(base, candidate, {});
  REQUIRE(c.timings.size() == 2);  // gpu_time and host_time, on the recorded raw samples
  const auto dtod = std::find_if(c.structure.begin(), c.structure.end(), [](const auto& s) { return s.figure == "copies DtoD"; });
  REQUIRE(dtod != c.structure.end());
  CHECK(dtod->regression);
  CHECK(dtod->base == "0");
  CHECK(dtod->candidate == "1");
  CHECK(dtod->detail == "256 MiB each, issued by aten::copy_ in aten::clone in aten::masked_fill");
  const auto clone = std::find_if(c.structure.begin(), c.structure.end(), [](const auto& s) { return s.figure == "op aten::clone"; });
  REQUIRE(clone != c.structure.end());
  CHECK(clone->regression);
  CHECK(c.regression());
  const auto report = history::terminal_text(c, false);
  CHECK(report.find("copies DtoD") != std::string::npos);
  CHECK(report.find("expr run experiments/series3.yaml --filter '^naive$'") != std::string::npos);

  // The other way round the copy vanishes: an improvement, and the gate passes unless a timing says otherwise.
  const auto back = history::compare(candidate, base, {});
  for (const auto& s : back.structure)
    if (s.figure == "copies DtoD") CHECK(!s.regression);
  CHECK(back.structural_regressions() == 0);
}

TEST_CASE("runs from another GPU are refused, naming the difference") {
  auto elsewhere = run_of("elsewhere", recorded("naive", "naive"));
  elsewhere.environment["gpu"] = "NVIDIA A100-SXM4-80GB";
  try {
    history::compare(run_of("here", recorded("naive", "naive")), elsewhere, {});
    FAIL("compared across GPUs");
  } catch (const history::EnvironmentMismatch& e) {
    CHECK(std::string(e.what()).find("gpu: NVIDIA H200 (baseline) vs NVIDIA A100-SXM4-80GB (candidate)") != std::string::npos);
  }
  history::CompareOptions across;
  across.across_environments = true;
  const auto c = history::compare(run_of("here", recorded("naive", "naive")), elsewhere, across);
  REQUIRE(!c.environment.empty());
  CHECK(c.environment.front().machine);
  CHECK(c.environment.front().key == "gpu");
}

TEST_CASE("a timing's rounds and its calibration's degrees of freedom survive results.json and the history") {
  outcome::Measurement m;
  m.experiment = "w";
  m.plugin = "waiter";
  m.status = outcome::Status::ok;
  m.host = outcome::Stats{};
  m.host->samples = {100, 101, 102, 99, 98, 103};
  m.host->count = 6;
  m.host->rounds = {100.5, 99.5};
  m.host->median = 100;
  m.host->run_to_run = 0.02;
  m.host->run_to_run_df = 9;
  const auto back = outcome::measurement_from_json(outcome::to_json(m));
  CHECK(back.host->rounds == m.host->rounds);
  CHECK(back.host->run_to_run_df == 9);

  const auto file = std::filesystem::temp_directory_path() / "expr_unit_history_rounds.sqlite";
  std::filesystem::remove(file);
  {
    history::Store store(file);
    auto run = run_of("rounds", recorded("naive", "naive"));
    run.experiments.front().timings["host_time"] = *m.host;
    store.begin_run(run);
    store.record_experiment(run.id, run.experiments.front());
    const auto loaded = store.load("rounds");
    REQUIRE(loaded);
    const auto& host = loaded->experiments.front().timings.at("host_time");
    CHECK(host.rounds == m.host->rounds);
    CHECK(host.run_to_run_df == 9);
    // A timing recorded in one process reads as one round, its median.
    CHECK(analysis::round_medians(loaded->experiments.front().timings.at("gpu_time")).size() == 1);
  }
  std::filesystem::remove(file);
}
