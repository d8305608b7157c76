// A Measurement as JSON: how a worker hands it to its parent and how results.json stores it.
#pragma once

#include <nlohmann/json.hpp>

#include "outcome/measurement.hpp"

namespace expr::outcome {

nlohmann::json to_json(const Measurement& m);
// The trace is not part of the JSON: the run directory says where it is (report/run_directory.hpp).
Measurement measurement_from_json(const nlohmann::json& j);


nlohmann::json to_json(const ParamValue& v);
ParamValue param_from_json(const nlohmann::json& j);

}  // namespace expr::outcome
