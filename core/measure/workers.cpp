// Choosing the workers of a run over several GPUs.
#include "measure/workers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>

namespace expr::measure {

bool runs_on_cpu(const series::ExperimentPlan& e, const std::optional<std::string>& device) {
  const auto& devices = e.plugin->description().devices;
  if (std::find(devices.begin(), devices.end(), Device::cuda) == devices.end()) return true;
  return device ? *device == "cpu" : e.device == series::DeviceChoice::cpu;
}

std::optional<std::string> first_on_gpu(const series::Plan& plan, const std::optional<std::string>& device) {
  const auto gpu = std::find_if(plan.experiments.begin(), plan.experiments.end(), [&](const auto& e) { return !runs_on_cpu(e, device); });
  if (gpu == plan.experiments.end()) return std::nullopt;
  return gpu->name;
}

namespace {

// The numbers of "N" or "I,J,...", each once; empty for "all".
std::vector<int> listed_numbers(const std::string& spec) {
  std::vector<int> listed;
  if (spec == "all") return listed;
  const auto wrong = fmt::format("--gpus {}: expected all, a number of GPUs, or GPU indices as in 0,2,3", spec);
  std::stringstream items(spec);
  for (std::string item; std::getline(items, item, ',');) {
    int value = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || value < 0) throw std::invalid_argument(wrong);
    if (std::find(listed.begin(), listed.end(), value) != listed.end())
      throw std::invalid_argument(fmt::format("--gpus {}: GPU {} is listed twice", spec, value));
    listed.push_back(value);
  }
  if (listed.empty()) throw std::invalid_argument(wrong);
  return listed;
}

}  // namespace

Workers choose_workers(const std::string& spec, const runner::DeviceProbe& probe, const std::optional<std::string>& on_gpu) {
  const bool all = spec == "all";
  const auto listed = listed_numbers(spec);
  const bool count = !all && listed.size() == 1 && spec.find(',') == std::string::npos;  // "2": two GPUs; "2," is GPU 2
  if (count && listed[0] == 0) throw std::invalid_argument(fmt::format("--gpus 0: at least one GPU; GPU 0 alone is --gpus 0,"));
  Workers w;
  if (probe.devices == 0) {
    if (on_gpu)
      throw std::invalid_argument(fmt::format("--gpus {}: no CUDA device ({}), and {} may run on one; --device cpu runs every experiment on the CPU",
                                              spec, probe.unavailable, *on_gpu));
    w.count = all ? 1 : count ? static_cast<std::size_t>(listed[0]) : listed.size();
    return w;
  }
  const auto plural = probe.devices == 1 ? "" : "s";
  if (all) {
    for (int i = 0; i < probe.devices; ++i) w.gpus.push_back(i);
  } else if (count) {
    if (listed[0] > probe.devices) throw std::invalid_argument(fmt::format("--gpus {}: this machine has {} CUDA device{}", spec, probe.devices, plural));
    for (int i = 0; i < listed[0]; ++i) w.gpus.push_back(i);
  } else {
    for (const auto i : listed)
      if (i >= probe.devices)
        throw std::invalid_argument(fmt::format("--gpus {}: there is no GPU {}; this machine has {} CUDA device{} (0 to {})", spec, i, probe.devices,
                                                plural, probe.devices - 1));
    w.gpus = listed;
  }
  w.count = w.gpus.size();
  return w;
}

}  // namespace expr::measure
