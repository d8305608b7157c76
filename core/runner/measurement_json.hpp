// A Measurement as JSON: how a worker hands it to its parent and how results.json stores it.
#pragma once

#include <nlohmann/json.hpp>

#include "runner/measurement.hpp"

namespace expr::runner {

nlohmann::json to_json(const Measurement& m);
// The trace is not part of the JSON; callers load m.trace_file themselves.
Measurement measurement_from_json(const nlohmann::json& j);

nlohmann::json to_json(const ParamValue& v);
ParamValue param_from_json(const nlohmann::json& j);

}  // namespace expr::runner
