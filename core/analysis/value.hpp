// Values that metrics produce and guesses compare: numbers with a physical dimension, or text.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "util/statistics.hpp"

namespace expr::analysis {

// Exponents of time and bytes: a count is {0,0}, a duration {1,0}, a bandwidth {-1,1}.
struct Dimension {
  int time = 0;
  int bytes = 0;
  friend bool operator==(const Dimension&, const Dimension&) = default;
  bool dimensionless() const { return time == 0 && bytes == 0; }
};
inline constexpr Dimension dimensionless{};
inline constexpr Dimension duration{1, 0};
inline constexpr Dimension data{0, 1};
std::string describe(Dimension d);  // "a count", "a duration", "a size in bytes", ...

// How a number is best shown; does not change its meaning.
enum class Display { number, percent, duration, bytes };

// All of a quantity but its value: what is known of a number before anything runs.
struct Unit {
  Dimension dim;
  Display display = Display::number;
};

struct Quantity {
  double value = 0;  // durations in ns, sizes in bytes, fractions as fractions
  Dimension dim;
  Display display = Display::number;
  Unit unit() const { return {dim, display}; }
  // For figures measured with noise (timings and what is computed from them): where the true
  // value lies (analysis/noise.hpp). Empty for exact figures: counts, literals.
  std::optional<util::Interval> interval = std::nullopt;
};

using Value = std::variant<Quantity, std::string>;
std::string format(const Value& v, int digits = 4);
// "27.3 µs [26.9 µs .. 27.8 µs]": the value with its interval, when it has one, with as many digits
// as it takes for the interval's ends to read apart.
std::string format_with_interval(const Quantity& q);
// The interval alone, "26.9 µs .. 27.8 µs", with as many digits; "" without one.
std::string format_interval(const Quantity& q);
// A figure's interval; an exact figure is its own.
util::Interval bounds(const Quantity& q);

// Why arithmetic has no value.
struct Undefined {
  std::string reason;  // "division by zero"
};

// The unit of `l op r`, op one of + - * /: + and - need one dimension and keep the left display;
// * and / combine the dimensions and keep the display of an operand whose dimension the result
// has. The checker applies it to units before anything runs, arithmetic() to every value.
std::variant<Unit, Undefined> arithmetic_unit(char op, const Unit& l, const Unit& r);

// `l op r` in arithmetic_unit's unit; undefined when the units do not combine, for a division by
// zero, and when the result is not a finite number (an overflow, or an operand that was not one).
// When an operand has an interval, the result's holds every value the operands' intervals allow.
std::variant<Quantity, Undefined> arithmetic(char op, const Quantity& l, const Quantity& r);

}  // namespace expr::analysis
