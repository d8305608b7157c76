#include "util/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace expr::util {

namespace {
std::string significant(double v) { return fmt::format("{:.4g}", v); }
}  // namespace

std::string format_duration(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3) return significant(ns) + " ns";
  if (a < 1e6) return significant(ns / 1e3) + " µs";
  if (a < 1e9) return significant(ns / 1e6) + " ms";
  return significant(ns / 1e9) + " s";
}

std::string format_bytes(double bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return significant(bytes) + " " + units[u];
}

std::string format_percent(double fraction) { return significant(fraction * 100) + "%"; }

std::string format_number(double value) {
  if (std::isfinite(value) && value == std::round(value) && std::fabs(value) < 1e15)
    return fmt::format("{}", static_cast<long long>(value));
  return significant(value);
}

}  // namespace expr::util
