// A Measurement as JSON: how a worker hands it to its parent and how results.json stores it.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>

#include "runner/measurement.hpp"

namespace expr::runner {

nlohmann::json to_json(const Measurement& m);
// The traces are not part of the JSON: load_traces reads them.
Measurement measurement_from_json(const nlohmann::json& j);

// Loads m.trace and the cold call's trace from their files, named relative to `run_dir`.
void load_traces(Measurement& m, const std::filesystem::path& run_dir);

nlohmann::json to_json(const ParamValue& v);
ParamValue param_from_json(const nlohmann::json& j);

}  // namespace expr::runner
