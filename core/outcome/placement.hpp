// Where an experiment runs and where its worker leaves its files: what the runner is handed and
// what the outputs hear of. Here, below the runner, so that the run directory (which decides the
// files, report/run_directory.hpp) and the sinks (which hear the placement, report/sink.hpp) need
// nothing of the runner, and the analysis side builds without CUDA.
#pragma once

#include <expr/plugin.hpp>

#include <filesystem>

namespace expr::outcome {

// Where an experiment runs: the kind of device, and which one of that kind.
struct Placement {
  Device device = Device::cpu;
  int index = 0;
};

// Where a worker leaves its files; the run directory decides.
struct ExperimentFiles {
  std::filesystem::path trace;       // the native trace of the traced iterations
  std::filesystem::path log;         // the worker's stdout and stderr
  std::filesystem::path cold_trace;  // the cold call's trace, when a guess reads it (runner/cold_trace.hpp)
  std::filesystem::path cold_log;    // that second worker's stdout and stderr
  // A later timing round's worker's stdout and stderr: beside the log, worker.round2.log.
  std::filesystem::path round_log(int round) const;
};

}  // namespace expr::outcome
