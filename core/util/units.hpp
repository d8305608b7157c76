// How figures are printed: a duration in the unit a reader expects, bytes in binary multiples.
#pragma once

#include <string>

namespace expr::util {

std::string format_duration(double ns);  // "812 ns", "14.7 µs", "1.955 ms", "2.31 s"
std::string format_bytes(double bytes);  // "512 B", "64 KiB", "1.5 GiB"
std::string format_percent(double fraction);
std::string format_number(double value);  // integers without decimals, others with 4 significant digits

}  // namespace expr::util
