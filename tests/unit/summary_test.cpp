// The terminal report of real runs (series 3 and the attention sweep recorded on an H200): its table
// fits a 120-character terminal, drops the columns no experiment fills, and names its figures as
// guesses do; past a number of experiments it lists those that need a look and counts the rest.
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

namespace {

// The experiments the report has a section for: lines such as "naive (masked_fill, cuda): ok".
std::size_t sections(const std::string& text) {
  std::size_t n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (!line.starts_with(" ") && (has(line, ", cuda): ") || has(line, ", cpu): "))) ++n;
  return n;
}

}  // namespace

TEST_CASE("a sweep of more experiments than the report lists shows those that need a look and counts the rest") {
  const auto sweep = expr::report::RunDirectory(EXPR_SOURCE_DIR "/tests/data/attention-sweep-h200").read();
  REQUIRE(sweep.experiments.size() == 60);
  // Up to the limit, every experiment.
  CHECK(sections(expr::report::terminal_report(sweep, false)) == 60);
  // Past it, only those that need a look: in this sweep one point, whose gpu_time was off its
  // traced kernel (a timing warning).
  const auto brief = expr::report::terminal_report(sweep, false, 10);
  CHECK(sections(brief) == 1);
  CHECK(has(brief, "\nflash[dtype=fp16,seq=4096] (sdpa, cuda): ok"));
  CHECK(has(brief, "1 experiment needs a look (failed, a guess not confirmed, a timing warning); the other 59 ran with every guess confirmed (`expr show --all` lists every one)"));
  // What is about the whole sweep stays: its guesses and the contradicted one's evidence.
  CHECK(has(brief, "✗ cudnn[dtype=bf16]: crossover(gpu_time, seq, flash) ~ 2048 within 50%"));
  CHECK(has(brief, "Guess vs trace: 234 confirmed, 2 contradicted, 0 not evaluable"));

  // More that need a look than the limit: the first ones, and how many more.
  const auto series3 = expr::report::RunDirectory(EXPR_SOURCE_DIR "/tests/data/series3-h200").read();
  const auto capped = expr::report::terminal_report(series3, false, 3);
  CHECK(sections(capped) == 3);
  CHECK(has(capped, "experiments need a look (failed, a guess not confirmed, a timing warning), the first 3 listed; the other "));
  CHECK(has(capped, "more experiments that need a look are not listed: `expr show --all`"));
}
