// How figures read in reports: a percentage never in exponent form.
#include <doctest/doctest.h>

#include "util/units.hpp"

using expr::util::format_percent;

TEST_CASE("a percentage reads as a reader wants it, never as 2.176e-13%") {
  CHECK(format_percent(2.176e-15) == "< 0.01%");  // what `expr calibrate` printed for a run-to-run noise of nearly nothing
  CHECK(format_percent(-3e-9) == "> -0.01%");
  CHECK(format_percent(0) == "0%");
  CHECK(format_percent(0.0001) == "0.01%");
  CHECK(format_percent(0.03) == "3%");
  CHECK(format_percent(0.123456) == "12.35%");
  CHECK(format_percent(123.456) == "12346%");
  CHECK(format_percent(0.123456, 6) == "12.3456%");
}
