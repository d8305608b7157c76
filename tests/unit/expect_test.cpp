// The expectation language: what parses, what is refused and where, and how guesses are judged.
// Measurements here carry timings and facts only; verdicts on traces are tested on recorded GPU
// data (trace_test.cpp, tests/e2e/recorded_test.cpp).
#include <doctest/doctest.h>

#include <cmath>

#include "analysis/noise.hpp"
#include "expect/check.hpp"

using namespace expr;

namespace {

const std::vector<std::string> experiments{"self", "other"};

// The offset and message of the error `text` raises.
std::pair<std::size_t, std::string> error_of(const std::string& text) {
  try {
    expect::compile(text, experiments);
  } catch (const expect::SyntaxError& e) {
    return {e.offset(), e.what()};
  }
  FAIL("no error for: ", text);
  return {};
}

outcome::Measurement timed(const std::string& name, double gpu_ns, double host_ns) {
  outcome::Measurement m;
  m.experiment = name;
  m.plugin = "test";
  m.status = outcome::Status::ok;
  m.device = Device::cuda;
  const auto stats = [](double ns) {
    return outcome::Stats{.count = 100, .iterations = 100, .median = ns, .mean = ns, .min = ns, .max = ns, .spread = 0.01, .seconds = 1, .converged = true};
  };
  m.device_time = stats(gpu_ns);
  m.host = stats(host_ns);
  m.facts = {{"backend", "flash"}, {"blocks", "2"}};
  return m;
}

expect::Judgement judge(const std::string& text, const outcome::Measurement& self, const outcome::Measurement* other = nullptr) {
  return expect::judge(expect::compile(text, experiments), self,
                       [&](const std::string& name) { return name == "other" ? other : nullptr; });
}

}  // namespace

TEST_CASE("parse errors point at the offending character") {
  CHECK(error_of("kernels = 5") == std::pair<std::size_t, std::string>{8, "'=' is not a comparison; write '=='"});
  CHECK(error_of("kernels == ").first == 11);
  CHECK(error_of("kernels(\"x\" == 1").second.find("expected ',' or ')'") != std::string::npos);
  CHECK(error_of("kernels == 5 5").second == "unexpected '5' after the guess");
  CHECK(error_of("kernels ~ 20").second.find("`~` needs a tolerance") == 0);
  CHECK(error_of("kernels == 5 ± 1").second.find("a tolerance only goes with `~`") == 0);
  CHECK(error_of("gpu_time < 5 parsecs") ==
        std::pair<std::size_t, std::string>{13, "unknown unit 'parsecs'; units are ns, us, µs, ms, s, B, KB, MB, GB, KiB, MiB, GiB and %"});
  CHECK(error_of("fact(\"x) == 1").second.find("string not closed") == 0);
}

TEST_CASE("names are checked against the metrics and the series' experiments, with suggestions") {
  CHECK(error_of("kernals == 5").second == "unknown metric 'kernals'; did you mean 'kernels'? (`expr metrics` lists every metric)");
  // The table's column is gpu_time; other tools call it device time.
  CHECK(error_of("device_time < 1ms").second == "unknown metric 'device_time'; did you mean 'gpu_time'? (`expr metrics` lists every metric)");
  CHECK(error_of("kernel.ocupancy > 10%") == std::pair<std::size_t, std::string>{7, "kernel has no figure 'ocupancy'; did you mean 'occupancy'?"});
  CHECK(error_of("kernel > 1").second.find("kernel picks one kernel; add the figure you want") == 0);
  CHECK(error_of("gpu_time < othr.gpu_time").second.find("did you mean 'other'?") != std::string::npos);
  CHECK(error_of("copies(kind=DtD) == 0").second.find("did you mean 'DtoD'?") != std::string::npos);
  CHECK(error_of("kernels(nam=\"x\") == 0").second.find("kernels has no argument 'nam'; did you mean 'name'?") == 0);
  CHECK(error_of("kernels(\"(\") == 0").second.find("is not a valid regex") != std::string::npos);
  CHECK(error_of("fact == 1").second.find("fact needs its key argument") == 0);
}

TEST_CASE("both sides must be the same kind of value, and units say which") {
  CHECK(error_of("gpu_time < 2").second.find("the observed value is a duration but the guess is a plain number") == 0);
  CHECK(error_of("copy_bytes == 5ms").second.find("a size in bytes but the guess is a duration") != std::string::npos);
  CHECK(error_of("kernel.name > \"x\"").second == "text compares only with ==, != or ~ (regex search)");
  CHECK(error_of("kernels ~ 20 ± 10%").second.find("for a relative tolerance write `within N%`") != std::string::npos);
  CHECK_NOTHROW(expect::compile("gpu_time / other.gpu_time ~ 3.7 within 20%", experiments));
  CHECK_NOTHROW(expect::compile("gpu_time < 2 * other.gpu_time - 1us", experiments));
  CHECK_NOTHROW(expect::compile("kernel.occupancy ~ 13% ± 1%", experiments));
  CHECK_NOTHROW(expect::compile("copies(DtoD) == 0", experiments));
}

TEST_CASE("comparisons and tolerances judge as written") {
  const auto self = timed("self", 1'000'000, 20'000);  // 1 ms on the device, 20 µs on the host
  CHECK(judge("gpu_time < 1.5ms", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("gpu_time > 1.5ms", self).verdict == expect::Verdict::contradicted);
  CHECK(judge("gpu_time ~ 1.1ms within 10%", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("gpu_time ~ 1.2ms within 10%", self).verdict == expect::Verdict::contradicted);
  CHECK(judge("gpu_time ~ 1.05ms ± 50us", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("gpu_time ~ 1.06ms ± 50us", self).verdict == expect::Verdict::contradicted);
  CHECK(judge("host_time == 20us", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("gpu_time / host_time == 50", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("fact(\"blocks\") == 2", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("fact(\"backend\") == \"flash\"", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("fact(\"backend\") ~ \"^fl\"", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("fact(\"backend\") != \"cudnn\"", self).verdict == expect::Verdict::confirmed);
}

TEST_CASE("a judgement shows the observed and the guessed value, evaluated") {
  const auto self = timed("self", 2'000'000, 20'000);
  const auto other = timed("other", 500'000, 20'000);
  const auto j = judge("gpu_time < 3 * other.gpu_time", self, &other);
  CHECK(j.verdict == expect::Verdict::contradicted);
  CHECK(j.observed == "2 ms");
  CHECK(j.guessed == "< 1.5 ms (3 * other.gpu_time)");
  CHECK(j.evidence.find("other.gpu_time = 500 µs") != std::string::npos);
}

TEST_CASE("what cannot be judged says why") {
  auto cpu = timed("self", 0, 20'000);
  cpu.device = Device::cpu;
  cpu.device_time.reset();
  auto j = judge("gpu_time < 1ms", cpu);
  CHECK(j.verdict == expect::Verdict::not_evaluable);
  CHECK(j.reason == "gpu_time needs CUDA-event timing, and the experiment ran on the cpu");

  j = judge("kernels == 1", cpu);
  CHECK(j.verdict == expect::Verdict::not_evaluable);
  CHECK(j.reason == "kernels needs a trace, and none was recorded");

  auto failed = timed("other", 1, 1);
  failed.status = outcome::Status::crashed;
  failed.reason = "the worker was killed by SIGSEGV";
  j = judge("host_time < other.host_time", timed("self", 1, 1), &failed);
  CHECK(j.verdict == expect::Verdict::not_evaluable);
  CHECK(j.reason == "other: experiment crashed: the worker was killed by SIGSEGV");

  j = judge("fact(\"missing\") == 1", cpu);
  CHECK(j.reason == "plugin test reported no fact 'missing'");
  j = judge("fact(\"backend\") + 1 > 0", cpu);
  CHECK(j.verdict == expect::Verdict::not_evaluable);
  CHECK(j.reason.find("is text (\"flash\"), not a number") != std::string::npos);
}

TEST_CASE("hostile guesses are refused with an error, not a stack overflow") {
  // Each of these overflowed the stack while parsing, binding, judging or destroying the tree.
  const auto deep_parentheses = std::string(5000, '(') + "1" + std::string(5000, ')') + " == 1";
  std::string many_signs = std::string(20000, '-') + "1 == 1";
  std::string many_terms = "1";
  for (int i = 0; i < 20000; ++i) many_terms += " + 1";
  many_terms += " == 1";
  for (const auto& hostile : {deep_parentheses, many_signs, many_terms}) {
    const auto [offset, message] = error_of(hostile);
    CHECK(offset == expect::max_guess_length);
    CHECK(message == "this guess is " + std::to_string(hostile.size()) + " bytes long; the limit is 1000");
  }

  // Within the length, nesting is bounded: the error points at the first level too many.
  const auto too_deep = [](std::size_t offset) {
    return std::pair<std::size_t, std::string>{offset, "the guess nests more than 64 levels deep (each parenthesis, sign and operator is one)"};
  };
  CHECK(error_of(std::string(100, '(') + "1" + std::string(100, ')') + " == 1") == too_deep(64));
  CHECK(error_of(std::string(100, '-') + "1 == 1") == too_deep(64));
  std::string chain = "1";
  for (int i = 0; i < 100; ++i) chain += "+1";
  CHECK(error_of(chain + " == 1") == too_deep(1 + 64 * 2));  // the 65th '+'
  CHECK_NOTHROW(expect::compile(std::string(30, '(') + "kernels" + std::string(30, ')') + " == " + std::string(30, '-') + "1", experiments));
}

TEST_CASE("every regex is compiled while binding") {
  // A text regex after `~` used to be compiled only when judging, after the run.
  CHECK(error_of("kernel.name ~ \"(\"") ==
        std::pair<std::size_t, std::string>{14, "'(' is not a valid regex: missing ): ("});
  CHECK(error_of("fact(\"backend\") ~ \"[\"").second.find("'[' is not a valid regex") == 0);
  CHECK(error_of("kernel.name ~ \"x\" ± 1").second == "a regex search takes no tolerance");
  CHECK(error_of("kernel.name ~ other.kernel.name ± 1").second == "`~` on text searches for a regex, written as a \"string\" after the `~`");

  // Long and deeply nested regexes need no bound: RE2 never recurses (util/regex.hpp).
  CHECK_NOTHROW(expect::compile("kernels(\"" + std::string(900, 'a') + "\") == 1", experiments));
  CHECK_NOTHROW(expect::compile("kernels(name=\"" + std::string(400, '(') + "a" + std::string(400, ')') + "\") == 1", experiments));

  // Found by fuzz_expect when std::regex compiled them (fuzz/known/expect): a count or
  // back-reference of 19 digits overflowed libstdc++'s long, and a{99999} took half a minute to
  // compile under ASan. RE2 refuses counts above 1000 and back-references with its reason, and
  // reads a brace it cannot take as a count as a literal brace.
  for (const char* refused : {"a{99999}", "a{2,99999}", "\\7777777777777777777777"}) {
    INFO(refused);
    CHECK(error_of(std::string("ops(\"") + refused + "\") == 1").second.find("is not a valid regex: ") != std::string::npos);
  }
  CHECK_NOTHROW(expect::compile("ops(\"a{99999999999999999999}\") == 1", experiments));
  CHECK_NOTHROW(expect::compile("ops(\"[0-9a-f]{64}_(x{2}y){3}\") == 1", experiments));
}

TEST_CASE("undefined arithmetic is not evaluable, with the reason, never a verdict") {
  auto self = timed("self", 1'000'000, 20'000);
  self.facts = {{"nan", "nan"}, {"inf", "inf"}, {"zero", "0"}};
  const auto not_evaluable = [&](const std::string& text, const std::string& reason) {
    INFO(text);
    const auto j = judge(text, self);
    CHECK(j.verdict == expect::Verdict::not_evaluable);
    CHECK(j.reason == reason);
  };
  // Both used to be confirmed: x / 0 is infinite, and infinity was "equal" to anything.
  not_evaluable("gpu_time / 0ms == 1", "gpu_time / 0ms is undefined: division by zero");
  not_evaluable("gpu_time / 0ms == 0", "gpu_time / 0ms is undefined: division by zero");
  not_evaluable("host_time / (gpu_time - 1ms) > 1", "host_time / (gpu_time - 1ms) is undefined: division by zero");
  not_evaluable("gpu_time * 1e308 > 1ms", "gpu_time * 1e308 is undefined: the result is infinite");
  not_evaluable("fact(\"inf\") - fact(\"inf\") == 0", "fact(\"inf\") - fact(\"inf\") is undefined: the result is not a number");
  // Values that are not finite numbers are not compared either: NaN == NaN would be false, NaN != 1 true.
  not_evaluable("fact(\"nan\") == 1", "the observed value is not a number");
  not_evaluable("fact(\"nan\") != 1", "the observed value is not a number");
  not_evaluable("1 < fact(\"inf\")", "the guessed value is infinite");
  // A fact is typed only once read: the dimension rule of + and - then applies when judging.
  not_evaluable("fact(\"zero\") + gpu_time > 0", "fact(\"zero\") + gpu_time is undefined: cannot add a plain number and a duration");
}

TEST_CASE("a guess's arithmetic has one unit rule, the same before the run and when judging") {
  const auto self = timed("self", 2'000'000, 20'000);
  CHECK(error_of("gpu_time + 1 > 0") == std::pair<std::size_t, std::string>{11, "cannot add a duration and a plain number"});
  CHECK(judge("gpu_time / host_time * 1ms == 100ms", self).verdict == expect::Verdict::confirmed);
  CHECK(judge("50% * 2 == 100%", self).observed == "100%");
  CHECK(judge("2 * 50% == 1", self).observed == "1");
}

TEST_CASE("a problem in a guess is a value, quoted and marked where the guess came from") {
  // A plugin's guess is in no file: reported at the experiment's plugin, quoting the guess.
  const auto origin = util::TextOrigin::detached({"series.yaml", 4, 13}, "kernel.ocupancy > 1");
  const auto compiled = expect::compile("kernel.ocupancy > 1", origin, experiments, "the guess of plugin copy: ");
  REQUIRE(std::holds_alternative<util::Problem>(compiled));
  CHECK(std::get<util::Problem>(compiled).str() ==
        "series.yaml:4:13: error: the guess of plugin copy: kernel has no figure 'ocupancy'; did you mean 'occupancy'?\n"
        "    kernel.ocupancy > 1\n" +
            std::string(4 + 7, ' ') + "^~~~~~~~");
  CHECK(std::holds_alternative<expect::GuessTree>(expect::compile("kernel.occupancy > 1%", origin, experiments)));
}

TEST_CASE("binding finds what a guess reads besides its own warm measurement") {
  const auto plain = expect::compile("gpu_time < other.gpu_time * 2 + other.host_time", experiments);
  CHECK(plain.reads.experiments == std::vector<std::string>{"other"});
  CHECK_FALSE(plain.reads.cold_call);
  const auto cold = expect::compile("cold.gpu_time > gpu_time", experiments);
  CHECK(cold.reads.cold_call);
  CHECK(cold.reads.experiments.empty());
  CHECK(error_of("cold.kernals == 1") ==
        std::pair<std::size_t, std::string>{5, "cold. reads a metric of this experiment's own cold call, and 'kernals' is no metric; did you mean 'kernels'?"});
}

namespace {

// An experiment whose host time was sampled: 201 samples spread evenly over median ± half_width.
outcome::Measurement sampled(const std::string& name, double median_ns, double half_width_ns, double run_to_run = 0) {
  auto m = timed(name, median_ns, median_ns);
  m.device_time.reset();
  m.host->samples.clear();
  for (int i = -100; i <= 100; ++i) m.host->samples.push_back(median_ns + half_width_ns * i / 100.0);
  m.host->count = m.host->samples.size();
  m.host->run_to_run = run_to_run;
  return m;
}

}  // namespace

TEST_CASE("a timing guess decided by noise is not evaluable: within noise, instead of flipping between runs") {
  // 27 µs against 1.25 * 20 µs = 25 µs: clear of the samples' noise either way.
  const auto near_other = sampled("other", 20'000, 1'000);
  const auto clear = judge("host_time > 1.25 * other.host_time", sampled("self", 27'000, 1'000), &near_other);
  CHECK(clear.verdict == expect::Verdict::confirmed);
  CHECK(clear.evidence.find("host_time = 27 µs [") != std::string::npos);

  // 1.25 * 21.6 µs = 27 µs: the medians' intervals straddle the boundary.
  const auto other = sampled("other", 21'600, 1'000);
  const auto close = judge("host_time > 1.25 * other.host_time", sampled("self", 27'000, 1'000), &other);
  CHECK(close.verdict == expect::Verdict::not_evaluable);
  CHECK(close.reason.find("within noise: observed 27 µs [") == 0);

  // The same clear case on a machine whose runs move by 5% from one to the next (calibrated):
  // 27 µs against 25 µs is no longer beyond doubt.
  const auto far_other = sampled("other", 20'000, 1'000, 0.05);
  const auto noisy = judge("host_time > 1.25 * other.host_time", sampled("self", 27'000, 1'000, 0.05), &far_other);
  CHECK(noisy.verdict == expect::Verdict::not_evaluable);
  CHECK(noisy.reason.find("within noise") == 0);

  // Against a literal, ~ and the other comparisons decide the same way.
  CHECK(judge("host_time < 30us", sampled("self", 27'000, 1'000)).verdict == expect::Verdict::confirmed);
  CHECK(judge("host_time < 27.01us", sampled("self", 27'000, 1'000)).verdict == expect::Verdict::not_evaluable);
  CHECK(judge("host_time ~ 27us within 5%", sampled("self", 27'000, 1'000)).verdict == expect::Verdict::confirmed);
  CHECK(judge("host_time ~ 20us within 5%", sampled("self", 27'000, 1'000)).verdict == expect::Verdict::contradicted);
  CHECK(judge("host_time ~ 25.75us within 5%", sampled("self", 27'000, 1'000)).verdict == expect::Verdict::not_evaluable);
}

TEST_CASE("a figure timed in rounds is known as well as its rounds agree, about the median of their medians") {
  // Three worker processes around 16, 17 and 27 µs (sdpa_cudnn's host time on the H200 read so),
  // the third with three times the samples of the others. The figure is 17 µs, the median of the
  // rounds' medians; the pooled samples' median is in the third round, near 27 µs, and their
  // order-statistic interval alone does not hold 17 µs.
  auto m = sampled("self", 17'000, 500);
  m.host->samples.clear();
  m.host->rounds = {16'000, 17'000, 27'000};
  for (double round : m.host->rounds)
    for (int k = 0; k < (round > 20'000 ? 3 : 1); ++k)
      for (int i = -100; i <= 100; ++i) m.host->samples.push_back(round + 500.0 * i / 100.0);
  m.host->count = m.host->samples.size();
  const auto interval = analysis::median_interval(*m.host);
  REQUIRE(interval);
  // Below: the processes' spread (the log of 16, 17 and 27 µs: sigma 0.2862, 2 df) over √3, at
  // t(0.975, 2) = 4.303, where the samples alone said ±1%. Above, the pooled samples' reach too.
  CHECK(interval->low == doctest::Approx(17'000 * std::exp(-4.303 * 0.2862 / std::sqrt(3.0))).epsilon(0.005));
  CHECK(interval->high > 27'000);
  const auto noisy = judge("host_time < 20us", m);
  CHECK(noisy.verdict == expect::Verdict::not_evaluable);
  CHECK(noisy.reason.find("within noise: observed 17 µs [") == 0);

  // Rounds that agree leave the samples' interval, and the guess is decided.
  m.host->rounds = {17'000, 17'000, 17'000};
  m.host->samples.clear();
  for (int k = 0; k < 3; ++k)
    for (int i = -100; i <= 100; ++i) m.host->samples.push_back(17'000 + 500.0 * i / 100.0);
  m.host->count = m.host->samples.size();
  const auto decided = judge("host_time < 20us", m);
  CHECK(decided.verdict == expect::Verdict::confirmed);
  CHECK(decided.evidence.find("median of 3 rounds' medians (603 samples)") != std::string::npos);
}

TEST_CASE("a figure's noise is the estimate whose bound reaches further, not the one with the larger sigma") {
  // Rounds 16, 17 and 18 µs (sigma of their logs 0.0589, 2 df, over sqrt(3): 0.034) beside a
  // calibration of 0.05 from 20 runs (19 df): the calibration's sigma is larger, but its bound,
  // t(0.975, 19) 0.05 = 0.105, reaches less far than the rounds', t(0.975, 2) 0.034 = 0.146.
  outcome::Stats s;
  s.rounds = {16'000, 17'000, 18'000};
  s.median = 17'000;
  s.run_to_run = 0.05;
  s.run_to_run_df = 19;
  const auto noise = analysis::figure_noise(s);
  CHECK(noise.df == 2);
  CHECK(noise.sigma == doctest::Approx(analysis::between_processes(s).sigma / std::sqrt(3.0)));
  // A calibration of more runs' worth, 0.1 at 19 df, reaches further, and is taken.
  s.run_to_run = 0.1;
  CHECK(analysis::figure_noise(s).df == 19);
}

TEST_CASE("what a new plugin author writes wrong first gets advice that fits") {
  // A transposition is one edit, so a short name swapped about still finds its metric.
  CHECK(error_of("pos(\"x\") == 1").second.find("did you mean 'ops'?") != std::string::npos);
  // A regex written bare: the message says regexes are quoted.
  CHECK(error_of("ranges(^sum$) == 1").second ==
        "unexpected character '^'; a regex is a quoted string, as in ranges(\"^sum$\") or ~ \"gemm|conv\"");
  // Two durations multiplied each have a unit: advice to add one would not help.
  const auto squared = error_of("gpu_time < host_time * other.host_time").second;
  CHECK(squared.find("the units do not cancel to a duration") != std::string::npos);
  CHECK(squared.find("write it with a unit") == std::string::npos);
  CHECK(error_of("gpu_time < 2").second.find("write it with a unit") != std::string::npos);
  // A skipped experiment had no chance to report a correctness figure: the reason is the skip.
  auto skipped = timed("self", 1, 1);
  skipped.status = outcome::Status::skipped;
  skipped.reason = "no CUDA device";
  CHECK(judge("rel_error < 1e-3", skipped).reason == "experiment skipped: no CUDA device");
}
