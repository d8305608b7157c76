// gpu_time and loop_time from a fake device (runner/device_timing.hpp), and how the timing rounds
// of an experiment add up (Iterations::round_share, runner::with_timing_rounds).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "runner/device_timing.hpp"
#include "runner/experiment.hpp"

using expr::outcome::Iterations;
using expr::outcome::Stats;

namespace {

// A device that runs every call in kernel_ns; the host launches a call in launch_ns, so a plain
// loop leaves the device idle between calls when launch_ns is the longer. Held, the calls run back
// to back, unless a call waits for the device (the hold then times out) or the batch overflows the
// launch queue (the host blocks in a launch until the hold times out).
class FakeDevice final : public expr::runner::DeviceClock {
 public:
  double kernel_ns = 10'000, launch_ns = 0;
  bool call_waits = false;
  std::size_t queue = 1'000'000;
  int holds = 0;

  void call() {
    ++calls_;
    if (holding_ && (call_waits || calls_ > queue)) timed_out_ = true;
  }
  void synchronize() override { holding_ = false; }
  void hold(std::chrono::nanoseconds) override {
    ++holds;
    holding_ = true;
    timed_out_ = false;
  }
  void release() override {}
  bool hold_timed_out() override { return timed_out_; }
  void start() override { calls_ = 0; }
  void stop() override {}
  double elapsed_ns() override {
    const bool back_to_back = holding_ && !timed_out_;
    return static_cast<double>(calls_) * (back_to_back ? kernel_ns : std::max(kernel_ns, launch_ns));
  }

 private:
  bool holding_ = false, timed_out_ = false;
  std::size_t calls_ = 0;
};

expr::runner::DeviceTimes time(FakeDevice& device) {
  const Iterations criteria{.warmup = 0, .traced = 0, .min_samples = 10, .min_time = 0, .max_time = 10, .max_noise = 0.01};
  return expr::runner::time_device(device, [&] { device.call(); }, criteria, device.launch_ns, [](const auto&, const auto&) {});
}

}  // namespace

TEST_CASE("with the queue held gpu_time is the kernels' own time, and loop_time carries the host's launch gaps") {
  FakeDevice device;
  device.kernel_ns = 10'000;
  device.launch_ns = 25'000;  // launch-bound: the host needs longer to launch a call than the device to run it
  const auto t = time(device);
  CHECK(t.queue_not_held.empty());
  CHECK(t.gpu.median == doctest::Approx(10'000));
  CHECK(t.loop.median == doctest::Approx(25'000));
  CHECK(t.gpu.count >= 10);
  CHECK(t.loop.count >= 10);
}

TEST_CASE("a call that waits for the device is timed as the plain loop, with the reason, after two holds") {
  FakeDevice device;
  device.call_waits = true;
  device.launch_ns = 25'000;
  const auto t = time(device);
  CHECK(t.queue_not_held.find("waits for the device") != std::string::npos);
  CHECK(t.gpu.median == t.loop.median);
  CHECK(t.gpu.median == doctest::Approx(25'000));
  CHECK(device.holds == 2);  // the first batch, then one call alone: each costs the hold's timeout, so no more
}

TEST_CASE("a launch queue too short for the batch shrinks the batch instead of giving up on the hold") {
  FakeDevice device;
  device.kernel_ns = 2'000;  // a 10 ms batch would be 5,000 calls
  device.launch_ns = 8'000;
  device.queue = 300;
  const auto t = time(device);
  CHECK(t.queue_not_held.empty());
  CHECK(t.gpu.median == doctest::Approx(2'000));
  CHECK(t.gpu.iterations > t.gpu.count);  // batches of several calls still
}

TEST_CASE("a round's share of the budget is the samples and the time divided among the rounds, and the noise their median allows") {
  const Iterations whole{.warmup = 1, .traced = 3, .min_samples = 20, .min_time = 0.3, .max_time = 3, .max_noise = 0.01, .rounds = 3};
  const auto share = whole.round_share();
  CHECK(share.min_samples == 7);  // rounded up: the rounds together take at least min_samples
  CHECK(share.min_time == doctest::Approx(0.1));
  CHECK(share.max_time == doctest::Approx(1.0));
  CHECK(share.max_noise == doctest::Approx(0.01382).epsilon(0.001));

  // Three rounds whose medians each scatter by the share's noise: the median of the three
  // scatters by no more than the whole's max_noise (sqrt(0.449) * 1.382% = 0.926%).
  std::mt19937 random(7);
  std::normal_distribution<double> round_median(1.0, share.max_noise);
  const int trials = 200'000;
  double squares = 0;
  for (int i = 0; i < trials; ++i) {
    std::array<double, 3> medians{round_median(random), round_median(random), round_median(random)};
    std::sort(medians.begin(), medians.end());
    squares += (medians[1] - 1.0) * (medians[1] - 1.0);
  }
  CHECK(std::sqrt(squares / trials) < whole.max_noise);
  CHECK(std::sqrt(squares / trials) > 0.9 * whole.max_noise);  // and the share gives away little

  // One round keeps the whole's target.
  auto single = whole;
  single.rounds = 1;
  CHECK(single.round_share().max_noise == whole.max_noise);
}

TEST_CASE("later timing rounds join the first round's figures, and a failed round is named and adds nothing") {
  const auto timed = [](double host, double device) {
    expr::outcome::Measurement m;
    m.status = expr::outcome::Status::ok;
    m.iterations.rounds = 3;
    const auto figure = [](double median) {
      Stats s;
      s.samples = {median - 1, median, median + 1};
      s.count = s.iterations = 3;
      s.median = s.mean = median;
      s.min = median - 1;
      s.max = median + 1;
      s.seconds = 0.1;
      s.converged = true;
      return s;
    };
    m.host = figure(host);
    m.device_time = figure(device);
    m.loop_time = figure(device);
    return m;
  };
  expr::outcome::Measurement failed;
  failed.status = expr::outcome::Status::crashed;
  failed.reason = "its worker was killed by SIGSEGV";
  const auto joined = expr::runner::with_timing_rounds(timed(100, 50), {failed, timed(300, 51)});  // the second round a slow process
  CHECK(joined.status == expr::outcome::Status::ok);
  CHECK(joined.host->rounds == std::vector<double>{100, 300});
  CHECK(joined.host->count == 6);
  CHECK(joined.device_time->rounds == std::vector<double>{50, 51});
  CHECK(joined.loop_time->rounds.size() == 2);
  CHECK(joined.reason.find("timing round 2 of 3 crashed (its worker was killed by SIGSEGV): its figures are left out") != std::string::npos);
  const auto odd_one_out = expr::runner::with_timing_rounds(timed(100, 50), {timed(300, 50), timed(102, 50)});
  CHECK(odd_one_out.host->median == 102);  // the median of the rounds: one odd process does not move it
}
