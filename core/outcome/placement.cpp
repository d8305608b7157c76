// The file names of a worker's later timing rounds (outcome/placement.hpp).
#include "outcome/placement.hpp"

#include <fmt/format.h>

namespace expr::outcome {

std::filesystem::path ExperimentFiles::round_log(int round) const {
  auto path = log;
  return path.replace_extension(fmt::format("round{}{}", round, log.extension().string()));
}

}  // namespace expr::outcome
