// A Measurement as JSON: how a worker hands it to its parent and how results.json stores it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "outcome/measurement.hpp"

namespace expr::outcome {

nlohmann::json to_json(const Measurement& m);
// The trace is not part of the JSON: the run directory says where it is (report/run_directory.hpp).
Measurement measurement_from_json(const nlohmann::json& j);


nlohmann::json to_json(const ParamValue& v);
ParamValue param_from_json(const nlohmann::json& j);

// A whole number of type Int read from a recorded file, which may come from elsewhere and hold
// anything: nlohmann converts a number out of Int's range with a cast whose result is undefined
// (the run_dir fuzzer gave 6.7e35 as an iteration count), so the value is checked first. Throws
// std::invalid_argument naming `field` when it is no whole number or does not fit.
template <class Int>
Int whole_number(const nlohmann::json& j, std::string_view field) {
  if (j.is_number_unsigned()) {
    if (const auto v = j.get<std::uint64_t>(); std::in_range<Int>(v)) return static_cast<Int>(v);
  } else if (j.is_number_integer()) {
    if (const auto v = j.get<std::int64_t>(); std::in_range<Int>(v)) return static_cast<Int>(v);
  } else if (j.is_number()) {
    // Below the first power of two beyond Int's range, which a double holds exactly.
    const double v = j.get<double>(), above = std::ldexp(1.0, std::numeric_limits<Int>::digits);
    if (v == std::floor(v) && v < above && v >= (std::is_signed_v<Int> ? -above : 0.0)) return static_cast<Int>(v);
  }
  throw std::invalid_argument(std::string(field) + " is " + j.dump() + ", not a whole number from " +
                              std::to_string(std::numeric_limits<Int>::min()) + " to " + std::to_string(std::numeric_limits<Int>::max()));
}

}  // namespace expr::outcome
