// The measurement's own metrics: see measurement_metrics.hpp.
#include "analysis/measurement_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "analysis/noise.hpp"
#include "analysis/observe.hpp"
#include "util/units.hpp"

namespace expr::analysis {

namespace {

std::string stats_evidence(const outcome::Stats& s) {
  if (s.count == 1) return "one call";
  auto samples = s.iterations > s.count ? fmt::format("{} batches of {} calls in all", s.count, s.iterations) : fmt::format("{} samples", s.count);
  if (s.rounds.size() > 1) samples = fmt::format("{} rounds' medians ({})", s.rounds.size(), samples);
  std::string interval;
  if (const auto i = median_interval(s)) {
    auto q = time_ns(s.median);
    q.interval = i;
    const auto noise = figure_noise(s);
    interval = fmt::format(", {} interval of the median {}{}", util::format_percent(timing_confidence), format_interval(q),
                           noise.known() ? fmt::format(" (with the figure's noise {})", util::format_percent(noise.sigma)) : "");
  }
  return fmt::format("median of {}, min {}, max {}, spread {}{}{}", samples, util::format_duration(s.min), util::format_duration(s.max),
                     util::format_percent(s.spread), interval, s.converged ? "" : ", did not converge");
}

// A median with the interval it is known within.
Quantity timing(const outcome::Stats& s) {
  auto q = time_ns(s.median);
  q.interval = median_interval(s);
  return q;
}

std::optional<Unavailable> no_device_timing(const outcome::Measurement& m, const char* metric) {
  if (auto u = not_ran(m)) return *u;
  if (m.device_time) return std::nullopt;
  return Unavailable{fmt::format("{} needs CUDA-event timing, {}", metric,
                                 m.device == Device::cuda ? "which a traced call does not get; busy_time is its device time"
                                                          : "and the experiment ran on the cpu")};
}

Outcome gpu_time(const outcome::Measurement& m, const MetricCall&) {
  if (auto u = no_device_timing(m, "gpu_time")) return *u;
  std::vector<std::string> caveats;
  if (!m.queue_not_held.empty()) caveats.push_back(m.queue_not_held);
  if (!m.timing_warning.empty()) caveats.push_back(m.timing_warning);
  return Observation{timing(*m.device_time), stats_evidence(*m.device_time) + (m.queue_not_held.empty() ? ", launch queue held full" : ""),
                     caveats};
}

Outcome loop_time(const outcome::Measurement& m, const MetricCall&) {
  if (auto u = no_device_timing(m, "loop_time")) return *u;
  if (!m.loop_time) return Unavailable{"loop_time was not measured: the run was recorded before expr timed the plain loop"};
  return Observation{timing(*m.loop_time), stats_evidence(*m.loop_time), {}};
}

Outcome launch_ratio(const outcome::Measurement& m, const MetricCall&) {
  if (auto u = no_device_timing(m, "launch_ratio")) return *u;
  if (!m.host) return Unavailable{"no host timing was recorded"};
  const double ratio = m.host->median / m.device_time->median;
  return Observation{count(ratio),
                     fmt::format("host_time {} over gpu_time {}: {}", util::format_duration(m.host->median),
                                 util::format_duration(m.device_time->median),
                                 ratio >= 1 ? "launch-bound, the device waits for the host" : "the device is the bottleneck"),
                     {}};
}

Outcome host_time(const outcome::Measurement& m, const MetricCall&) {
  if (auto u = not_ran(m)) return *u;
  if (!m.host) return Unavailable{"no host timing was recorded"};
  return Observation{timing(*m.host), stats_evidence(*m.host), {}};
}

Outcome first_call(const outcome::Measurement& m, const MetricCall&) {
  if (auto u = not_ran(m)) return *u;
  if (!m.first_call_ns) return Unavailable{"no first call was timed"};
  std::vector<std::string> caveats;
  if (!m.setup_warning.empty()) caveats.push_back(m.setup_warning);
  return Observation{time_ns(*m.first_call_ns), "the cold first run(), device work included", caveats};
}

// Throughput over the device time when there is one, else over the host time.
Outcome throughput(const outcome::Measurement& m, double Work::*amount, double scale, const char* unit) {
  if (auto u = not_ran(m)) return *u;
  if (!m.work || m.work.value().*amount <= 0) return Unavailable{fmt::format("plugin {} states no work model for {}", m.plugin, unit)};
  const auto* stats = m.device_time ? &*m.device_time : m.host ? &*m.host : nullptr;
  if (!stats) return Unavailable{"no timing was recorded"};
  const double rate = m.work.value().*amount / (stats->median * 1e-9) / scale;
  auto figure = count(rate);
  if (const auto i = median_interval(*stats); i && i->low > 0)  // a rate is known as well as the time it divides by
    figure.interval = util::Interval{m.work.value().*amount / (i->high * 1e-9) / scale, m.work.value().*amount / (i->low * 1e-9) / scale};
  return Observation{figure,
                     fmt::format("{} {} of work in {} ({} time)", util::format_number(m.work.value().*amount / scale), unit,
                                 util::format_duration(stats->median), m.device_time ? "device" : "host"),
                     {}};
}

Outcome tflops(const outcome::Measurement& m, const MetricCall&) { return throughput(m, &Work::flops, 1e12, "TFLOP"); }
Outcome gbps(const outcome::Measurement& m, const MetricCall&) { return throughput(m, &Work::bytes, 1e9, "GB"); }

Outcome rel_error(const outcome::Measurement& m, const MetricCall&) {
  if (m.correctness.empty()) {
    if (auto u = not_ran(m)) return *u;  // a skipped experiment had no chance to report one
    return Unavailable{fmt::format("plugin {} reported no correctness figure", m.plugin)};
  }
  const auto worst = std::max_element(m.correctness.begin(), m.correctness.end(), [](auto& a, auto& b) {
    return a.relative_error < b.relative_error || std::isnan(b.relative_error);
  });
  return Observation{count(worst->relative_error),
                     fmt::format("{}: relative error {:.3g} (tolerance {:.3g})", worst->what, worst->relative_error, worst->tolerance),
                     {}};
}

Outcome fact(const outcome::Measurement& m, const MetricCall& call) {
  const auto key = arg(call, "key").value_or("");
  auto it = m.facts.find(key);
  if (it == m.facts.end()) {
    if (auto u = not_ran(m)) return *u;
    return Unavailable{fmt::format("plugin {} reported no fact '{}'", m.plugin, key)};
  }
  // Numbers stay numbers, so facts can be compared with figures.
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (!it->second.empty() && end == it->second.c_str() + it->second.size())
    return Observation{count(v), fmt::format("reported by plugin {}", m.plugin), {}};
  return Observation{it->second, fmt::format("reported by plugin {}", m.plugin), {}};
}

}  // namespace

std::vector<MetricSpec> measurement_metrics() {
  const FieldSpec counted{"", dimensionless, Display::number, false, ""};
  const FieldSpec timed{"", duration, Display::duration, false, ""};
  const FieldSpec number_or_text{"", dimensionless, Display::number, false, "", true};
  return {
      {"gpu_time", "median device time per iteration, by CUDA events around calls enqueued behind a held queue, tracing off", {}, {},
       timed, gpu_time},
      {"loop_time", "median device time per iteration of a plain loop of calls, the host's launch gaps included, tracing off", {}, {},
       timed, loop_time},
      {"launch_ratio", "host_time / gpu_time: 1 or more when the host launches a call more slowly than the device runs it (launch-bound)",
       {}, {}, counted, launch_ratio},
      {"host_time", "median host time of one run() call, device idle before each call, tracing off", {}, {}, timed, host_time},
      {"first_call", "time of the cold first run(), device work included", {}, {}, timed, first_call},
      {"tflops", "TFLOP/s from the plugin's work model over the device (else host) time", {}, {}, counted, tflops},
      {"gbps", "GB/s from the plugin's work model over the device (else host) time", {}, {}, counted, gbps},
      {"rel_error", "the worst relative error the plugin reported against its reference", {}, {}, counted, rel_error},
      {"fact", "a fact the plugin reported (a number when it reads as one)",
       {{"key", ArgKind::key, "the fact's name"}}, {}, number_or_text, fact},
  };
}

}  // namespace expr::analysis
