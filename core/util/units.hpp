// How figures are printed: a duration in the unit a reader expects, bytes in binary multiples.
#pragma once

#include <string>

namespace expr::util {

// Four significant digits unless `digits` asks for more (an interval whose ends would read alike).
std::string format_duration(double ns, int digits = 4);  // "812 ns", "14.7 µs", "1.955 ms", "2.31 s"
std::string format_bytes(double bytes, int digits = 4);  // "512 B", "64 KiB", "1.5 GiB"
std::string format_percent(double fraction, int digits = 4);  // "3%", "0.1234%", "< 0.01%", "12345%": never in exponent form
std::string format_number(double value, int digits = 4);  // integers without decimals, others with `digits` significant digits

}  // namespace expr::util
