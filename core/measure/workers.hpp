// How many workers `expr run --gpus` runs at once, and on which GPUs, against the devices probed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runner/series_runner.hpp"
#include "series/plan.hpp"

namespace expr::measure {

struct Workers {
  std::vector<int> gpus;  // one worker each; empty: `count` workers, no GPU of their own
  std::size_t count = 1;
};

// Whether an experiment runs on the CPU whatever the machine has: so asked (by --device or the
// series), or its plugin runs nowhere else.
bool runs_on_cpu(const series::ExperimentPlan& e, const std::optional<std::string>& device);
// The first experiment of `plan` that may run on a GPU, if any.
std::optional<std::string> first_on_gpu(const series::Plan& plan, const std::optional<std::string>& device);

// `--gpus all|N|I,J,...` against the machine: the GPUs, one worker each. Without a CUDA device, no
// experiment may need one (`on_gpu` names the first that may), and then N (or as many as listed)
// workers run on the CPU; `all` is one. Throws std::invalid_argument with the reason.
Workers choose_workers(const std::string& spec, const runner::DeviceProbe& probe, const std::optional<std::string>& on_gpu);

}  // namespace expr::measure
