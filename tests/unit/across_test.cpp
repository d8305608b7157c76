// Runs of one series side by side (history/across.hpp) on recorded runs: series 3 twice on one
// H200 with different software (tests/data/series3-h200 and series3-counters-h200), and the CPU
// series on two machines (tests/data/cpu-series-epyc and cpu-series-xeon); and the history's
// references that name a machine.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "history/across.hpp"
#include "history/compare.hpp"
#include "history/store.hpp"

namespace fs = std::filesystem;
using namespace expr;

namespace {

history::RunRecord recorded(const std::string& name) { return history::read_run_directory(fs::path(EXPR_SOURCE_DIR) / "tests" / "data" / name); }

const history::EnvironmentRow* row(const history::Across& a, const std::string& key) {
  const auto it = std::find_if(a.environment.begin(), a.environment.end(), [&](const auto& r) { return r.key == key; });
  return it == a.environment.end() ? nullptr : &*it;
}

const history::ExperimentRow& experiment(const history::Across& a, const std::string& identity) {
  const auto it = std::find_if(a.experiments.begin(), a.experiments.end(), [&](const auto& r) { return r.identity == identity; });
  REQUIRE(it != a.experiments.end());
  return *it;
}

}  // namespace

TEST_CASE("series 3 twice on one H200 with other software: the guesses one run lacks come first, the software that changed is named") {
  const auto plain = recorded("series3-h200"), counters = recorded("series3-counters-h200");
  const auto a = history::across({plain, counters}, 0);
  CHECK(a.series == "series3");
  CHECK(a.runs[0].machine == "NVIDIA H200 · driver 580.159.04 · CUDA 13.0 · LibTorch 2.11.0 · cuDNN 9.19.0");
  CHECK(a.runs[1].machine == a.runs[0].machine);
  // One machine: nothing of its hardware differs; what does is software and which GPU it was.
  CHECK(std::none_of(a.environment.begin(), a.environment.end(), [](const auto& r) { return r.kind == history::EnvironmentKind::hardware; }));
  REQUIRE(row(a, "expr_revision"));
  CHECK(row(a, "expr_revision")->kind == history::EnvironmentKind::software);
  CHECK(row(a, "expr_revision")->values == std::vector<std::string>{"fe51b8e2ffc6-dirty", "a93eb2dd75ad-dirty"});
  REQUIRE(row(a, "kernel"));
  CHECK(row(a, "kernel")->kind == history::EnvironmentKind::software);
  REQUIRE(row(a, "gpu_uuid"));
  CHECK(row(a, "gpu_uuid")->kind == history::EnvironmentKind::instance);
  CHECK(row(a, "gpu_uuid")->values[0].empty());  // the older run did not record it
  CHECK(!row(a, "gpu"));
  // Software first, instance last.
  CHECK(a.environment.back().kind == history::EnvironmentKind::instance);

  // The run with hardware counters on has seven guesses more (occupancy achieved, SM and DRAM
  // throughput); every other guess has the same verdict in both runs.
  REQUIRE(a.differing() == 7);
  for (std::size_t i = 0; i < a.guesses.size(); ++i) {
    INFO(a.guesses[i].subject, ": ", a.guesses[i].check);
    CHECK(a.guesses[i].differs == (i < 7));
    if (i < 7) {
      CHECK(!a.guesses[i].cells[0]);
      REQUIRE(a.guesses[i].cells[1]);
      const auto& check = a.guesses[i].check;
      CHECK((check.find("throughput") != std::string::npos || check.find("achieved_occupancy") != std::string::npos));
    } else {
      CHECK(a.guesses[i].cells[0]->verdict == a.guesses[i].cells[1]->verdict);
    }
  }
  const auto cudnn_occupancy = std::find_if(a.guesses.begin(), a.guesses.end(), [](const auto& g) {
    return g.subject == "sdpa_cudnn" && g.check == "kernel.achieved_occupancy ~ kernel.occupancy ± 3%";
  });
  REQUIRE(cudnn_occupancy != a.guesses.end());
  CHECK(cudnn_occupancy->cells[1]->verdict == "contradicted");

  // Each experiment's figures in both runs, timings as ratios to the reference.
  CHECK(a.experiments.size() == plain.experiments.size());
  const auto& flash = experiment(a, "sdpa_flash");
  REQUIRE(flash.cells[0]);
  REQUIRE(flash.cells[1]);
  CHECK(flash.cells[0]->main_kernel.find("flash_fwd") != std::string::npos);
  CHECK(flash.cells[0]->kernels == flash.cells[1]->kernels);
  REQUIRE(flash.cells[0]->occupancy);
  CHECK(*flash.cells[0]->occupancy == doctest::Approx(0.125));
  CHECK(a.ratio(flash, 0, "gpu_time") == doctest::Approx(1.0));
  CHECK(a.ratio(flash, 1, "gpu_time") == doctest::Approx(*flash.cells[1]->gpu_time / *flash.cells[0]->gpu_time));

  // The other run as the reference turns the ratio over.
  const auto b = history::across({plain, counters}, 1);
  CHECK(b.ratio(experiment(b, "sdpa_flash"), 0, "gpu_time") == doctest::Approx(1.0 / *a.ratio(flash, 1, "gpu_time")));
}

TEST_CASE("side by side refuses what is not one series in two runs or more") {
  const auto plain = recorded("series3-h200");
  CHECK_THROWS_WITH_AS(history::across({plain}, 0), doctest::Contains("two runs or more"), history::Incomparable);
  CHECK_THROWS_WITH_AS(history::across({plain, plain}, 0), doctest::Contains("given twice"), history::Incomparable);
  CHECK_THROWS_WITH_AS(history::across({plain, recorded("cuda-probe-h200")}, 0), doctest::Contains("of series 'cuda_probe'"), history::Incomparable);
  CHECK_THROWS_WITH_AS(history::across({plain, recorded("series3-counters-h200")}, 2), doctest::Contains("there are 2 runs"), history::Incomparable);
}

TEST_CASE("the CPU series on two machines: their hardware and software differences first, host times as ratios") {
  const auto epyc = recorded("cpu-series-epyc"), xeon = recorded("cpu-series-xeon");
  const auto a = history::across({epyc, xeon}, 0);
  CHECK(a.runs[0].machine == "AMD EPYC · LibTorch 1.13.0");
  // The GPU machine's CPU ran it; the machine is named by its GPU, and its CPU is in the table.
  CHECK(a.runs[1].machine == "NVIDIA H200 · driver 580.159.04 · CUDA 13.0 · LibTorch 2.11.0");
  REQUIRE(row(a, "cpu"));
  CHECK(row(a, "cpu")->kind == history::EnvironmentKind::hardware);
  CHECK(row(a, "cpu")->values == std::vector<std::string>{"AMD EPYC", "Intel(R) Xeon(R) Processor"});
  REQUIRE(row(a, "libtorch"));
  CHECK(row(a, "libtorch")->kind == history::EnvironmentKind::software);
  CHECK(row(a, "libtorch")->values == std::vector<std::string>{"1.13.0", "2.11.0"});
  CHECK(a.environment.front().kind == history::EnvironmentKind::hardware);
  // The clone of the out-of-place masked_fill shows on both machines: no verdict differs, the
  // observed op counts do (LibTorch 1.13 dispatches far more ops).
  CHECK(a.differing() == 0);
  const auto fewer_ops = std::find_if(a.guesses.begin(), a.guesses.end(), [](const auto& g) { return g.check == "ops < naive.ops"; });
  REQUIRE(fewer_ops != a.guesses.end());
  CHECK(fewer_ops->cells[0]->observed != fewer_ops->cells[1]->observed);
  const auto& naive = experiment(a, "naive");
  REQUIRE(naive.cells[0]->host_time);
  REQUIRE(naive.cells[1]->host_time);
  CHECK(!naive.cells[0]->gpu_time);
  CHECK(!a.ratio(naive, 1, "gpu_time"));
  CHECK(a.ratio(naive, 1, "host_time") == doctest::Approx(*naive.cells[1]->host_time / *naive.cells[0]->host_time));
}

TEST_CASE("the history names the newest run on each machine, and a run by a part of its machine") {
  const auto file = fs::temp_directory_path() / ("expr-across-history-" + std::to_string(::getpid()) + ".sqlite");
  fs::remove(file);
  const auto epyc = recorded("cpu-series-epyc"), xeon = recorded("cpu-series-xeon");
  {
    history::Store store(file);
    for (const auto& run : {epyc, xeon, recorded("series3-h200")}) {
      store.begin_run(run);
      for (const auto& e : run.experiments) store.record_experiment(run.id, e);
      store.finish_run(run);
    }
    CHECK(store.newest_on_each_machine("cpu_masked_fill") == std::vector<std::string>{epyc.id, xeon.id});
    CHECK(store.newest_on_each_machine("series3").size() == 1);
    CHECK_THROWS_WITH(store.newest_on_each_machine("nothing"), doctest::Contains("no finished run of series 'nothing'"));
    CHECK(store.resolve("@last", "cpu_masked_fill") == xeon.id);
    CHECK(store.resolve("@last:epyc", "cpu_masked_fill") == epyc.id);
    CHECK(store.resolve("@last-good:H200", "cpu_masked_fill") == xeon.id);
    CHECK_THROWS_WITH(store.resolve("@last:A100", "cpu_masked_fill"), doctest::Contains("on a machine matching 'A100'"));
    CHECK_THROWS_WITH(store.resolve("@last:", "cpu_masked_fill"), doctest::Contains("write a part of the machine after the colon"));
    CHECK_THROWS_WITH(store.resolve("@" + epyc.id + ":H200", "cpu_masked_fill"), doctest::Contains("names one run already"));
  }
  fs::remove(file);
}
