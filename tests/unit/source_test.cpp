// The one renderer of problems (util/source.hpp): the header, the quoted line and the marker under
// the offending text, for a file, for a text that no file holds, and for lines a terminal cannot
// show whole.
#include <doctest/doctest.h>

#include <memory>

#include "util/source.hpp"

using namespace expr;

namespace {

std::shared_ptr<const util::SourceText> file(const std::string& text) { return std::make_shared<const util::SourceText>("s.yaml", text); }

}  // namespace

TEST_CASE("a problem in a file quotes its line and marks the offending text") {
  const auto source = file("series: x\n    expect: [kernel.ocupancy > 1]\n");
  CHECK(util::Problem({"s.yaml", 2, 21, 8, source}, "kernel has no figure 'ocupancy'").str() ==
        "s.yaml:2:21: error: kernel has no figure 'ocupancy'\n"
        "        expect: [kernel.ocupancy > 1]\n" +
            std::string(4 + 20, ' ') + "^~~~~~~~");
  // One character: a caret alone. Past the end of the line: a caret after it.
  CHECK(util::Problem({"s.yaml", 1, 9, 1, source}, "m").str() == "s.yaml:1:9: error: m\n    series: x\n" + std::string(4 + 8, ' ') + "^");
  CHECK(util::Problem({"s.yaml", 1, 10, 1, source}, "m").str() == "s.yaml:1:10: error: m\n    series: x\n" + std::string(4 + 9, ' ') + "^");
  // A range running past the line's end stops there.
  CHECK(util::Problem({"s.yaml", 1, 9, 50, source}, "m").str() == "s.yaml:1:9: error: m\n    series: x\n" + std::string(4 + 8, ' ') + "^");
}

TEST_CASE("without the text at hand a problem is its header alone") {
  CHECK(util::Problem({"s.yaml", 3, 4}, "m").str() == "s.yaml:3:4: error: m");
  CHECK(util::Problem({"s.yaml", 0, 0}, "cannot open the series file").str() == "s.yaml: error: cannot open the series file");
}

TEST_CASE("the marker lines up under tabs and multi-byte characters") {
  // Columns count bytes, as yaml-cpp and editors do; the marker counts characters (µ and ± are two
  // bytes each) and keeps tabs.
  const auto source = file("\tgpu_time ~ 1µs ± 5xs\n");
  CHECK(util::Problem({"s.yaml", 1, 22, 2, source}, "unknown unit 'xs'").str() ==
        "s.yaml:1:22: error: unknown unit 'xs'\n    \tgpu_time ~ 1µs ± 5xs\n    \t" + std::string(18, ' ') + "^~");
  CHECK(util::Problem({"s.yaml", 1, 14, 2, source}, "µ").str() ==
        "s.yaml:1:14: error: µ\n    \tgpu_time ~ 1µs ± 5xs\n    \t" + std::string(12, ' ') + "^");
}

TEST_CASE("a long line is quoted as a window around the mark") {
  const std::string name(26000, 'a');
  const auto source = file("  - name: " + name + "-x\n");
  const auto text = util::Problem({"s.yaml", 1, 11 + 26000, 1, source}, "not an identifier").str();
  const auto quoted = text.substr(text.find('\n') + 1, text.rfind('\n') - text.find('\n') - 1);
  const auto marker = text.substr(text.rfind('\n') + 1);
  CHECK(quoted.size() < 200);
  CHECK(quoted.starts_with("    ..."));
  CHECK(quoted.ends_with("-x"));
  REQUIRE(marker.size() == quoted.size() - 1);
  CHECK(marker.back() == '^');
  CHECK(quoted[marker.size() - 1] == '-');
}

TEST_CASE("a text that no file holds is reported where it came from and quoted itself") {
  const auto origin = util::TextOrigin::detached({"s.yaml", 4, 13}, "kernals == 5");
  CHECK(origin.problem(0, 7, "plugin copy, guess 2: unknown metric 'kernals'").str() ==
        "s.yaml:4:13: error: plugin copy, guess 2: unknown metric 'kernals'\n"
        "    kernals == 5\n"
        "    ^~~~~~~");
}

TEST_CASE("a mapped text reports each offset where its byte was written") {
  // "ab c" read from "x: >\n  ab\n  c\n": the space was a line break.
  const auto source = file("x: >\n  ab\n  c\n");
  const util::TextOrigin origin(source, {7, 8, 9, 12, 13});
  const auto c = origin.at(3, 4);
  CHECK(c.str() == "s.yaml:3:3");
  const auto ab_to_c = origin.at(0, 4);  // marked to the end of its first line
  CHECK(ab_to_c.str() == "s.yaml:2:3");
  CHECK(ab_to_c.length == 2);
  CHECK(origin.problem(3, 4, "m").str() == "s.yaml:3:3: error: m\n      c\n      ^");
  // Unknown: every offset at the start.
  CHECK(util::TextOrigin(util::SourcePos{"s.yaml", 1, 4, 1, source}).at(3, 4).str() == "s.yaml:1:4");
}
