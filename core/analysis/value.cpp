#include "analysis/value.hpp"

#include "util/units.hpp"

namespace expr::analysis {

std::string describe(Dimension d) {
  if (d == dimensionless) return "a plain number";
  if (d == duration) return "a duration";
  if (d == data) return "a size in bytes";
  return "a quantity of time^" + std::to_string(d.time) + " bytes^" + std::to_string(d.bytes);
}

std::string format(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  const auto& q = std::get<Quantity>(v);
  if (q.dim == duration) return util::format_duration(q.value);
  if (q.dim == data) return util::format_bytes(q.value);
  if (q.display == Display::percent) return util::format_percent(q.value);
  return util::format_number(q.value);
}

std::string format_with_interval(const Quantity& q) {
  if (!q.interval) return format(q);
  Quantity low = q, high = q;
  low.value = q.interval->low;
  high.value = q.interval->high;
  return format(q) + " [" + format(low) + " .. " + format(high) + "]";
}

}  // namespace expr::analysis
