#include "analysis/value.hpp"

#include "util/units.hpp"

namespace expr::analysis {

std::string describe(Dimension d) {
  if (d == dimensionless) return "a plain number";
  if (d == duration) return "a duration";
  if (d == data) return "a size in bytes";
  return "a quantity of time^" + std::to_string(d.time) + " bytes^" + std::to_string(d.bytes);
}

std::string format(const Value& v, int digits) {
  if (const auto* s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  const auto& q = std::get<Quantity>(v);
  if (q.dim == duration) return util::format_duration(q.value, digits);
  if (q.dim == data) return util::format_bytes(q.value, digits);
  if (q.display == Display::percent) return util::format_percent(q.value, digits);
  return util::format_number(q.value, digits);
}

namespace {

// The digits it takes for an interval's ends to read apart, from four up to nine.
int interval_digits(const Quantity& q) {
  Quantity low = q, high = q;
  low.value = q.interval->low;
  high.value = q.interval->high;
  int digits = 4;
  while (digits < 9 && format(low, digits) == format(high, digits)) ++digits;
  return digits;
}

}  // namespace

std::string format_interval(const Quantity& q) {
  if (!q.interval) return "";
  const int digits = interval_digits(q);
  Quantity low = q, high = q;
  low.value = q.interval->low;
  high.value = q.interval->high;
  return format(low, digits) + " .. " + format(high, digits);
}

std::string format_with_interval(const Quantity& q) {
  if (!q.interval) return format(q);
  return format(q, interval_digits(q)) + " [" + format_interval(q) + "]";
}

}  // namespace expr::analysis
