#include "util/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace expr::util {

namespace {
std::string significant(double v, int digits) { return fmt::format("{:.{}g}", v, digits); }
}  // namespace

std::string format_duration(double ns, int digits) {
  const double a = std::fabs(ns);
  if (a < 1e3) return significant(ns, digits) + " ns";
  if (a < 1e6) return significant(ns / 1e3, digits) + " µs";
  if (a < 1e9) return significant(ns / 1e6, digits) + " ms";
  return significant(ns / 1e9, digits) + " s";
}

std::string format_bytes(double bytes, int digits) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return significant(bytes, digits) + " " + units[u];
}

std::string format_percent(double fraction, int digits) {
  // Never in exponent form: "2.176e-13%" is a zero to a reader, "1.2e+04%" a hundredfold.
  const double percent = fraction * 100;
  if (percent != 0 && std::fabs(percent) < 0.01) return percent > 0 ? "< 0.01%" : "> -0.01%";
  if (std::fabs(percent) >= std::pow(10.0, digits)) return fmt::format("{:.0f}%", percent);
  return significant(percent, digits) + "%";
}

std::string format_number(double value, int digits) {
  if (std::isfinite(value) && value == std::round(value) && std::fabs(value) < 1e15)
    return fmt::format("{}", static_cast<long long>(value));
  return significant(value, digits);
}

}  // namespace expr::util
