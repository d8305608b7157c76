// `expr run --gpus` against the devices probed (measure/workers.hpp): which GPUs get a worker, how
// many workers run on a machine without one, and each wrong choice refused with its reason.
#include <doctest/doctest.h>

#include <stdexcept>

#include "measure/workers.hpp"

namespace {

using expr::measure::choose_workers;

expr::runner::DeviceProbe gpus(int count) { return {count, count == 0 ? "no CUDA-capable device is detected" : "", {}}; }

}  // namespace

TEST_CASE("--gpus gives one worker to each GPU asked for: all, the first N, or those listed") {
  CHECK(choose_workers("all", gpus(4), std::nullopt).gpus == std::vector<int>{0, 1, 2, 3});
  CHECK(choose_workers("2", gpus(4), std::nullopt).gpus == std::vector<int>{0, 1});
  CHECK(choose_workers("3,1", gpus(4), std::nullopt).gpus == std::vector<int>{3, 1});
  const auto one = choose_workers("2,", gpus(4), std::nullopt);  // GPU 2 alone, not two GPUs
  CHECK(one.gpus == std::vector<int>{2});
  CHECK(one.count == 1);
}

TEST_CASE("--gpus refuses what the machine cannot give, naming what it has") {
  CHECK_THROWS_WITH_AS(choose_workers("5", gpus(4), std::nullopt), "--gpus 5: this machine has 4 CUDA devices", std::invalid_argument);
  CHECK_THROWS_WITH_AS(choose_workers("0,4", gpus(4), std::nullopt), "--gpus 0,4: there is no GPU 4; this machine has 4 CUDA devices (0 to 3)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(choose_workers("1,1", gpus(4), std::nullopt), "--gpus 1,1: GPU 1 is listed twice", std::invalid_argument);
  CHECK_THROWS_WITH_AS(choose_workers("0", gpus(4), std::nullopt), "--gpus 0: at least one GPU; GPU 0 alone is --gpus 0,", std::invalid_argument);
  for (const auto* bad : {"two", "1,,2", "-1", ""})
    CHECK_THROWS_WITH_AS(choose_workers(bad, gpus(4), std::nullopt),
                         (std::string("--gpus ") + bad + ": expected all, a number of GPUs, or GPU indices as in 0,2,3").c_str(), std::invalid_argument);
}

TEST_CASE("without a GPU, CPU experiments run in as many workers as asked, and one that may need a GPU is refused") {
  const auto three = choose_workers("3", gpus(0), std::nullopt);
  CHECK(three.gpus.empty());
  CHECK(three.count == 3);
  CHECK(choose_workers("all", gpus(0), std::nullopt).count == 1);
  CHECK(choose_workers("0,1", gpus(0), std::nullopt).count == 2);
  CHECK_THROWS_WITH_AS(choose_workers("2", gpus(0), std::string("sdpa[seq=1024]")),
                       "--gpus 2: no CUDA device (no CUDA-capable device is detected), and sdpa[seq=1024] may run on one; --device cpu runs "
                       "every experiment on the CPU",
                       std::invalid_argument);
}
