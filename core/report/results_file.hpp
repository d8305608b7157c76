// results.json: the run's machine-readable record, rewritten whole (atomically) after each experiment.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

#include "report/results.hpp"

namespace expr::report {

nlohmann::json to_json(const RunResult& run);
void write_results(const RunResult& run);  // run.run_dir / results.json

// Reads a run directory's results.json and each experiment's native trace. Throws
// std::runtime_error naming the file and the problem.
RunResult read_results(const std::filesystem::path& run_dir);

}  // namespace expr::report
