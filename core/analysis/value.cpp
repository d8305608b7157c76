// Values that metrics yield and guesses compute with: how they read, the units of arithmetic, and
// arithmetic that carries the noise of measured figures as intervals.
#include "analysis/value.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

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

util::Interval bounds(const Quantity& q) { return q.interval.value_or(util::Interval{q.value, q.value}); }

namespace {

util::Interval interval_arithmetic(char op, util::Interval l, util::Interval r) {
  if (op == '+') return {l.low + r.low, l.high + r.high};
  if (op == '-') return {l.low - r.high, l.high - r.low};
  if (op == '/') {
    if (r.low <= 0 && r.high >= 0) return {-INFINITY, INFINITY};  // dividing by what may be zero bounds nothing
    r = {1 / r.high, 1 / r.low};
  }
  const double corners[] = {l.low * r.low, l.low * r.high, l.high * r.low, l.high * r.high};
  return {*std::min_element(std::begin(corners), std::end(corners)), *std::max_element(std::begin(corners), std::end(corners))};
}

}  // namespace

std::variant<Unit, Undefined> arithmetic_unit(char op, const Unit& l, const Unit& r) {
  if (op == '+' || op == '-') {
    if (!(l.dim == r.dim))
      return Undefined{std::string(op == '+' ? "cannot add " : "cannot subtract ") + describe(l.dim) + " and " + describe(r.dim)};
    return l;
  }
  const int sign = op == '*' ? 1 : -1;
  const Dimension d{l.dim.time + sign * r.dim.time, l.dim.bytes + sign * r.dim.bytes};
  return Unit{d, d == l.dim ? l.display : d == r.dim ? r.display : Display::number};
}

std::variant<Quantity, Undefined> arithmetic(char op, const Quantity& l, const Quantity& r) {
  const auto unit = arithmetic_unit(op, l.unit(), r.unit());
  if (const auto* u = std::get_if<Undefined>(&unit)) return *u;
  if (op == '/' && r.value == 0) return Undefined{"division by zero"};
  const double value = op == '+'   ? l.value + r.value
                       : op == '-' ? l.value - r.value
                       : op == '*' ? l.value * r.value
                                   : l.value / r.value;
  if (std::isnan(value)) return Undefined{"the result is not a number"};
  if (std::isinf(value)) return Undefined{"the result is infinite"};
  const auto& [dim, display] = std::get<Unit>(unit);
  Quantity out{value, dim, display};
  if (l.interval || r.interval) out.interval = interval_arithmetic(op, bounds(l), bounds(r));
  return out;
}

}  // namespace expr::analysis
