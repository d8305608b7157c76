// Where a guess's characters were written in a series file, for every way YAML can write a
// string: a problem inside a folded or literal block, a plain scalar running over lines or a quoted
// one with escapes is reported at its true line and column, not at the scalar's start plus an offset.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "series/series.hpp"

using namespace expr;

namespace {

// The guesses of a one-experiment series whose `expect:` list is `expect`.
std::vector<series::GuessSpec> guesses(const std::string& name, const std::string& expect) {
  const auto file = std::filesystem::temp_directory_path() / ("expr_series_position_" + name + ".yaml");
  std::ofstream(file) << "series: x\nexperiments:\n  - name: a\n    plugin: p\n    expect:\n" << expect;
  auto s = series::read(file);
  std::filesystem::remove(file);
  return s.experiments.at(0).guesses;
}

// Where the last '5' of a guess was written, as line:column.
std::string last_five(const series::GuessSpec& g) {
  const auto at = g.check.rfind('5');
  const auto pos = g.written.at(at, at + 1);
  return std::to_string(pos.line) + ":" + std::to_string(pos.column);
}

std::string first(const series::GuessSpec& g) {
  const auto pos = g.written.at(0, 1);
  return std::to_string(pos.line) + ":" + std::to_string(pos.column);
}

}  // namespace

TEST_CASE("offsets inside block scalars map to the lines they were written on") {
  const auto g = guesses("blocks",
                         "      - check: >\n"         // 6
                         "          kernels\n"         // 7
                         "          == 5 5\n"          // 8: folded, the line break became a space
                         "      - check: |\n"          // 9
                         "          kernels ==\n"      // 10
                         "            5 5\n"           // 11: literal, more indented: the break and two spaces stay
                         "      - check: >-\n"         // 12
                         "\n"                          // 13
                         "          ops(\"µs\") == 1 5\n");  // 14: µ is two bytes
  REQUIRE(g.size() == 3);
  CHECK(g[0].check == "kernels == 5 5\n");
  CHECK(first(g[0]) == "7:11");
  CHECK(last_five(g[0]) == "8:16");
  CHECK(g[1].check == "kernels ==\n  5 5\n");
  CHECK(first(g[1]) == "10:11");
  CHECK(last_five(g[1]) == "11:15");
  CHECK(last_five(g[2]) == "14:27");
  // Past the last character (an error at the end of the guess): just after it, not on the next line.
  const auto end = g[0].written.at(g[0].check.size(), g[0].check.size());
  CHECK(end.line == 8);
  CHECK(end.column == 17);
}

TEST_CASE("offsets inside plain and quoted scalars skip what YAML dropped") {
  const auto g = guesses("flow",
                         "      - plain\n"                    // 6
                         "        multi   5 5\n"              // 7: a plain scalar folds too
                         "      - \"quo\\\"ted 5 5\"\n"        // 8: \" is one character
                         "      - 'single ''q'' 5 5'\n"       // 9: '' is one character
                         "      - kernels == 5 # a comment\n");  // 10
  REQUIRE(g.size() == 4);
  CHECK(g[0].check == "plain multi   5 5");
  CHECK(first(g[0]) == "6:9");
  CHECK(last_five(g[0]) == "7:19");
  CHECK(g[1].check == "quo\"ted 5 5");
  CHECK(first(g[1]) == "8:10");
  CHECK(last_five(g[1]) == "8:21");
  CHECK(g[2].check == "single 'q' 5 5");
  CHECK(last_five(g[2]) == "9:25");
  CHECK(last_five(g[3]) == "10:20");
}

TEST_CASE("where the value cannot be traced back, every offset is the scalar's start") {
  // \x35 is '5': the value's characters are not all in the file.
  const auto g = guesses("escape", "      - \"kernels == \\x35\"\n");
  REQUIRE(g.size() == 1);
  CHECK(g[0].check == "kernels == 5");
  CHECK(last_five(g[0]) == "6:9");
}
