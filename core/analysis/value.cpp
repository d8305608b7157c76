#include "analysis/value.hpp"

#include <cmath>

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
  return Quantity{value, dim, display};
}

}  // namespace expr::analysis
