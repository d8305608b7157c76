// The memory figures of a trace and their metrics: see memory.hpp.
#include "analysis/memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/observe.hpp"
#include "util/units.hpp"

namespace expr::analysis {

std::vector<IterationMemory> memory_per_iteration(const trace::Trace& t, trace::MemorySource source, bool device_side) {
  std::vector<IterationMemory> out(t.iterations.size());
  std::vector<std::int64_t> level(t.iterations.size(), 0);  // the running sum since the iteration began
  for (const auto& e : t.memory) {
    if (e.source != source || e.iteration == trace::none || (e.device >= 0) != device_side) continue;
    const auto i = static_cast<std::size_t>(e.iteration);
    auto& it = out[i];
    level[i] += e.bytes;
    if (e.bytes > 0) {
      it.allocated += e.bytes;
      ++it.allocations;
    }
    if (level[i] > it.peak) {
      it.peak = level[i];
      it.total_allocated_at_peak = e.total_allocated;
      it.total_reserved_at_peak = e.total_reserved;
    }
  }
  return out;
}

namespace {

using outcome::Measurement;

std::string show_bytes(double v) { return util::format_bytes(v); }
std::string show_count(double v) { return util::format_number(v); }

template <class Field>
std::vector<double> column(const std::vector<IterationMemory>& per_iteration, Field field) {
  std::vector<double> values;
  for (const auto& it : per_iteration) values.push_back(static_cast<double>(it.*field));
  return values;
}

// The allocator's figures are of the experiment's device: a CUDA experiment's device memory, a CPU
// experiment's host memory.
std::vector<IterationMemory> allocator_memory(const Measurement& m) {
  return memory_per_iteration(*m.trace, trace::MemorySource::allocator, m.device == Device::cuda);
}

Outcome peak_memory(const Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::allocator_trace)) return *u;
  const auto per_iteration = allocator_memory(m);
  const auto peaks = column(per_iteration, &IterationMemory::peak);
  const auto highest = std::max_element(per_iteration.begin(), per_iteration.end(),
                                        [](const auto& a, const auto& b) { return a.peak < b.peak; });
  std::string evidence = per_iteration_text(peaks, show_bytes) + " above what the allocator held as the iteration began";
  if (highest->total_allocated_at_peak >= 0)
    evidence += fmt::format("; at the highest peak it held {} for tensors{}", show_bytes(static_cast<double>(highest->total_allocated_at_peak)),
                            highest->total_reserved_at_peak > 0
                                ? fmt::format(" and had {} reserved", show_bytes(static_cast<double>(highest->total_reserved_at_peak)))
                                : "");
  return Observation{bytes(static_cast<double>(highest->peak)), evidence, {}};
}

Outcome allocated_bytes(const Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::allocator_trace)) return *u;
  const auto values = column(allocator_memory(m), &IterationMemory::allocated);
  return Observation{bytes(mean(values)), per_iteration_text(values, show_bytes) + " asked of the allocator", {}};
}

Outcome allocations(const Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::allocator_trace)) return *u;
  const auto values = column(allocator_memory(m), &IterationMemory::allocations);
  return Observation{count(mean(values)), per_iteration_text(values, show_count) + " allocations asked of the allocator", {}};
}

std::vector<IterationMemory> driver_memory(const Measurement& m) {
  return memory_per_iteration(*m.trace, trace::MemorySource::driver, true);
}

Outcome driver_allocations(const Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::driver_memory_trace)) return *u;
  const auto values = column(driver_memory(m), &IterationMemory::allocations);
  return Observation{count(mean(values)), per_iteration_text(values, show_count) + " device allocations by the driver",
                     device_caveats(*m.trace)};
}

Outcome driver_allocated_bytes(const Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::driver_memory_trace)) return *u;
  const auto values = column(driver_memory(m), &IterationMemory::allocated);
  return Observation{bytes(mean(values)), per_iteration_text(values, show_bytes) + " of device memory allocated by the driver",
                     device_caveats(*m.trace)};
}

}  // namespace

std::vector<MetricSpec> memory_metrics() {
  const FieldSpec sized{"", data, Display::bytes, false, ""};
  const FieldSpec counted{"", dimensionless, Display::number, false, ""};
  return {
      {"peak_memory",
       "the most memory one traced iteration needed at once beyond what was allocated before it, as the framework's allocator "
       "saw it (the largest of the iterations'); needs a plugin that reports its allocator (expr_torch::trace_memory)",
       {}, {}, sized, peak_memory},
      {"allocated_bytes", "bytes one traced iteration asked of the framework's allocator", {}, {}, sized, allocated_bytes},
      {"allocations", "allocations one traced iteration asked of the framework's allocator", {}, {}, counted, allocations},
      {"driver_allocations",
       "device allocations that reached the CUDA driver per traced iteration (cudaMalloc, cuMemAlloc, ...; a caching allocator "
       "asks it only when its cache is short, so cold.driver_allocations shows what the first call set up)",
       {}, {}, counted, driver_allocations},
      {"driver_allocated_bytes", "bytes of device memory the CUDA driver allocated per traced iteration", {}, {}, sized,
       driver_allocated_bytes},
  };
}

}  // namespace expr::analysis
