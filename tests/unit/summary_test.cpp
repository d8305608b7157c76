// The terminal report of a real run (series 3 recorded on an H200): its table fits a 120-character
// terminal, drops the columns no experiment fills, and names its figures as guesses do.
#include <doctest/doctest.h>

#include <sstream>

#include "report/run_directory.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the table of series 3 on an H200 fits 120 columns, in blocks that each name the experiment") {
  const auto run = expr::report::RunDirectory(EXPR_SOURCE_DIR "/tests/data/series3-h200").read();
  const auto text = expr::report::terminal_report(run, false);
  const auto table = text.substr(0, text.find("\nnaive ("));  // the table, before the first experiment's guesses
  std::istringstream lines(table);
  std::vector<std::string> headers;
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK(expr::report::display_width(line) <= 120);
    if (line.starts_with("  experiment ")) headers.push_back(line);
  }
  REQUIRE(headers.size() >= 2);
  std::string all;
  for (const auto& h : headers) all += h + "\n";
  INFO(all);
  // The figures are named as a guess reads them.
  for (const auto* column : {"gpu_time", "host_time", "first_call", "kernels", "copies", "kernel.occupancy", "kernel.launch_api", "tflops"})
    CHECK(has(all, std::string(" ") + column));
  // No counters in that run: the column of achieved occupancy is dropped.
  CHECK(!has(all, "achieved_occupancy"));
}

TEST_CASE("a guess that compares with another experiment shows both sides") {
  const auto run = expr::report::RunDirectory(EXPR_SOURCE_DIR "/tests/data/series3-h200").read();
  const auto text = expr::report::terminal_report(run, false);
  // naive_inplace: activities == naive.activities - 1, judged with naive's count on the other side.
  CHECK(has(text, "activities == naive.activities - 1  →  6 vs == 6 ("));
}
