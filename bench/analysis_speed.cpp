// How fast the analysis path runs on a large trace: metrics and expectations, then the Chrome
// export. The trace is a recorded one (e.g. tests/data/series3-h200/experiments/sdpa_math/
// expr_trace.json) with its iterations repeated, shifted in time, until it holds `records` records:
// real kernels, copies, API calls and ops, only more of them.
//
// Then the regex engine on its own, in the same process: the guesses' patterns searched in the
// trace's record names one by one (the metrics cache each name's answer, so this is the engine's
// raw speed), with expr's engine (RE2, util/regex.hpp) and with libstdc++'s std::regex, which it
// replaced; and the same patterns in a 10,000-character name.
//
//   expr_bench_analysis TRACE_FILE [records]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <regex>

#include "expect/check.hpp"
#include "report/chrome_trace.hpp"
#include "trace/trace_file.hpp"
#include "util/regex.hpp"

using namespace expr;

namespace {

// Appends `copies` more copies of every record, each copy shifted past the end of the last.
void repeat(trace::Trace& t, std::size_t copies) {
  const auto base = t;
  trace::Ns span = 0;
  for (const auto& it : base.iterations) span = std::max(span, it.end);
  for (const auto& k : base.kernels) span = std::max(span, k.end);
  span -= base.iterations.empty() ? 0 : base.iterations.front().start;
  std::uint32_t max_correlation = 0;
  for (const auto& c : base.api_calls) max_correlation = std::max(max_correlation, c.correlation);
  for (std::size_t n = 1; n <= copies; ++n) {
    const auto shift = static_cast<trace::Ns>(n) * (span + 1000);
    const auto ranges = static_cast<std::int32_t>(t.ranges.size());
    const auto iterations = static_cast<std::int32_t>(t.iterations.size());
    const auto correlation = static_cast<std::uint32_t>(n) * (max_correlation + 1);
    for (auto r : base.ranges) {
      r.start += shift, r.end += shift;
      if (r.parent != trace::none) r.parent += ranges;
      if (r.iteration != trace::none) r.iteration += iterations;
      t.ranges.push_back(r);
    }
    for (auto it : base.iterations) t.iterations.push_back({it.range + ranges, it.start + shift, it.end + shift});
    for (auto c : base.api_calls) {
      c.start += shift, c.end += shift, c.correlation += correlation;
      t.api_calls.push_back(c);
    }
    auto spans = [&](auto& to, const auto& from) {
      for (auto s : from) {
        s.start += shift, s.end += shift, s.correlation += correlation;
        to.push_back(s);
      }
    };
    spans(t.kernels, base.kernels);
    spans(t.copies, base.copies);
    spans(t.memsets, base.memsets);
  }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Each pattern searched in each name, `rounds` times over; returns the matches (so the work stays)
// and the time per search.
template <class Search>
std::pair<std::size_t, double> time_searches(const std::vector<std::string>& names, std::size_t patterns, std::size_t rounds,
                                             const Search& search) {
  std::size_t matches = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t r = 0; r < rounds; ++r)
    for (std::size_t p = 0; p < patterns; ++p)
      for (const auto& n : names) matches += search(p, n);
  return {matches, seconds_since(start) / static_cast<double>(rounds * patterns * names.size())};
}

void compare_regex_engines(const trace::Trace& t) {
  // The benchmark's guesses' patterns, and the ones the docs show.
  const std::vector<std::string> patterns{"gemm", "sgemm", "^aten::tril$", "Launch", "^aten::matmul$", "^cudaLaunchKernel$",
                                          R"(sm\d+_)", "flash_(fwd|bwd)"};
  // Every record's name, in record order, as an uncached filter would meet them.
  std::vector<std::string> names;
  for (const auto& k : t.kernels) names.push_back(t.strings[k.name]);
  for (const auto& c : t.api_calls) names.push_back(t.strings[c.name]);
  for (const auto& r : t.ranges) names.push_back(t.strings[r.name]);
  names.resize(std::min<std::size_t>(names.size(), 20'000));
  std::size_t length = 0;
  for (const auto& n : names) length += n.size();

  std::vector<util::Regex> ours;
  std::vector<std::regex> theirs;
  for (const auto& p : patterns) {
    ours.emplace_back(p);
    theirs.emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
  }
  const auto re2 = time_searches(names, patterns.size(), 3, [&](std::size_t p, const std::string& n) { return ours[p].search(n); });
  const auto std_regex = time_searches(names, patterns.size(), 3, [&](std::size_t p, const std::string& n) { return std::regex_search(n, theirs[p]); });
  fmt::print("regex: {} patterns x {} record names ({:.0f} characters on average): RE2 {:.0f} ns a search, std::regex {:.0f} ns "
             "({:.2f}x RE2's time); {} and {} matches\n",
             patterns.size(), names.size(), static_cast<double>(length) / static_cast<double>(names.size()), re2.second * 1e9,
             std_regex.second * 1e9, std_regex.second / re2.second, re2.first, std_regex.first);

  // A 10,000-character name: std::regex recurses once per character on patterns with a repeated
  // group, so only the patterns without one are timed with it.
  const std::vector<std::string> long_name{std::string(10'000, 'a') + "_gemm"};
  const auto re2_long = time_searches(long_name, patterns.size(), 100, [&](std::size_t p, const std::string& n) { return ours[p].search(n); });
  const auto std_long = time_searches(long_name, 6, 100, [&](std::size_t p, const std::string& n) { return std::regex_search(n, theirs[p]); });
  fmt::print("regex on a 10,000-character name: RE2 {:.1f} us a search, std::regex {:.1f} us (the 6 patterns without a repeated group)\n",
             re2_long.second * 1e6, std_long.second * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: expr_bench_analysis TRACE_FILE [records]\n");
    return 2;
  }
  const std::size_t wanted = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1'000'000;
  auto recorded = trace::load(argv[1]);
  const auto per_copy = recorded.record_count();
  repeat(recorded, wanted / per_copy);
  trace::link(recorded);
  outcome::Measurement m;
  m.experiment = "big";
  m.status = outcome::Status::ok;
  m.trace = outcome::TraceSource(std::make_shared<const trace::Trace>(std::move(recorded)));
  const auto& t = *m.trace;
  fmt::print("trace: {} records ({} kernels, {} copies, {} API calls, {} host ranges) in {} iterations\n", t.record_count(),
             t.kernels.size(), t.copies.size(), t.api_calls.size(), t.ranges.size(), t.iterations.size());

  const std::vector<std::string> checks{
      "kernels ~ 20 ± 3",         "copies(kind=DtoD) == 0",         "kernels(\"gemm\") == kernels(\"sgemm\")",
      "ops(\"^aten::tril$\") == 1", "kernel.occupancy > 10%",         "kernel(\"gemm\").duration < 1ms",
      "busy_time < 10ms",         "api_calls(\"Launch\") > 0",      "kernels(op=\"^aten::matmul$\") >= 1",
      "kernel_time > 1us",        "kernels(api=\"^cudaLaunchKernel$\") == kernels"};
  const auto find = [](const std::string&) -> const outcome::Measurement* { return nullptr; };
  auto start = std::chrono::steady_clock::now();
  std::size_t confirmed = 0;
  for (const auto& c : checks)
    confirmed += expect::judge(expect::compile(c, {}), m, find).verdict == expect::Verdict::confirmed;
  const double judge_s = seconds_since(start);

  start = std::chrono::steady_clock::now();
  fmt::memory_buffer json;
  report::render_chrome_trace(t, analysis::kernel_occupancies(t), {"bench", "bench"}, json);
  const double export_s = seconds_since(start);

  const double records = static_cast<double>(t.record_count());
  fmt::print("{} expectations judged ({} confirmed) in {:.3f} s\n", checks.size(), confirmed, judge_s);
  fmt::print("Chrome export: {:.1f} MB in {:.3f} s\n", static_cast<double>(json.size()) / 1e6, export_s);
  fmt::print("metrics + expectations + Chrome export: {:.3f} s for {:.0f} records = {:.2f} M records/s\n", judge_s + export_s,
             records, records / (judge_s + export_s) / 1e6);
  compare_regex_engines(t);
  return 0;
}
