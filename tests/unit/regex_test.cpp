// The regex engine (util/regex.hpp): the syntax the docs promise, a clear refusal of what RE2 does
// not do, and long names with pathological patterns, which std::regex could not survive: its
// matcher recurses once per character and backtracks exponentially.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "expect/check.hpp"
#include "trace/trace_file.hpp"
#include "util/regex.hpp"

using namespace expr;
using util::Regex;

TEST_CASE("the ECMAScript syntax the docs promise") {
  CHECK(Regex("gemm").search("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n"));
  CHECK_FALSE(Regex("^gemm").search("sm80_xmma_gemm"));
  CHECK(Regex("^aten::copy_$").search("aten::copy_"));
  CHECK_FALSE(Regex("^aten::copy_$").search("aten::copy_x"));
  CHECK(Regex(R"(sm\d+_)").search("cudnn_generated_fort_native_sdpa_sm90_flash"));
  CHECK(Regex(R"(\bflash\b)").search("pytorch_flash::flash_fwd_kernel") == false);
  CHECK(Regex(R"(flash_(fwd|bwd))").search("flash_fwd_kernel"));
  CHECK(Regex(R"((?:ab){2,3}c)").search("xxababcx"));
  CHECK(Regex(R"(\w+::\s*\w+)").search("at::native"));
  CHECK(Regex("a.*?b").search("aXXbYYb"));
  CHECK(Regex("[A-Z][a-z]+").search("cudaLaunchKernel"));
  const auto groups = Regex(R"(\s*(range|pow2)\s*\((.*)\)\s*)").full_match(" pow2(256, 8192) ");
  REQUIRE(groups);
  CHECK(*(*groups)[1] == "pow2");
  CHECK(*(*groups)[2] == "256, 8192");
  const auto optional = Regex("(a)|(b)").full_match("b");
  REQUIRE(optional);
  CHECK_FALSE((*optional)[1].has_value());
  CHECK(*(*optional)[2] == "b");
  CHECK_FALSE(Regex("ab").full_match("abc"));
}

TEST_CASE("what RE2 does not do is refused with its reason, at the guess") {
  CHECK_THROWS_WITH_AS(Regex(R"((a)\1)"), doctest::Contains("invalid escape sequence"), util::RegexError);
  CHECK_THROWS_WITH_AS(Regex("gemm(?=_f32)"), doctest::Contains("invalid perl operator"), util::RegexError);
  CHECK_THROWS_WITH_AS(Regex("("), doctest::Contains("missing )"), util::RegexError);
  // In a guess: the error names the regex and the place.
  try {
    expect::compile("kernels(\"(?<=x)y\") == 1", {});
    FAIL("compiled");
  } catch (const expect::SyntaxError& e) {
    CHECK(std::string(e.what()).find("'(?<=x)y' is not a valid regex") != std::string::npos);
    CHECK(e.offset() == 8);
  }
  try {
    expect::compile("kernel.name ~ \"[\"", {});
    FAIL("compiled");
  } catch (const expect::SyntaxError& e) {
    CHECK(std::string(e.what()).find("'[' is not a valid regex") != std::string::npos);
  }
}

TEST_CASE("a 10,000-character name against pathological patterns: answered, neither hung nor overflowed") {
  const std::string name(10'000, 'a');
  // Exponential backtracking for a backtracking engine; a recursion per character for std::regex.
  CHECK_FALSE(Regex("(a*)*b").search(name));
  CHECK_FALSE(Regex("(a|aa)+$b").search(name));
  CHECK_FALSE(Regex("^(a+)+$x").search(name));
  CHECK(Regex("^(a|b)*$").search(name));
  CHECK(Regex("(.)*").full_match(name));
  CHECK(Regex("a{1000}$").search(name));

  // The same through a guess, on a recorded H200 trace whose cuDNN kernel is given a 10,000
  // character name: the metric's filter searches it like any other.
  auto t = trace::load(std::filesystem::path(EXPR_SOURCE_DIR) / "tests/data/series3-h200/experiments/sdpa_cudnn/expr_trace.json");
  const auto long_name = t.strings.intern("cudnn_" + name + "_sm90");
  for (auto& k : t.kernels) k.name = long_name;
  outcome::Measurement m;
  m.experiment = "cudnn";
  m.status = outcome::Status::ok;
  m.device = Device::cuda;
  m.trace = outcome::TraceSource(std::make_shared<const trace::Trace>(std::move(t)));
  const auto find = [](const std::string&) -> const outcome::Measurement* { return nullptr; };
  const auto judge = [&](const std::string& guess) { return expect::judge(expect::compile(guess, {}), m, find).verdict; };
  CHECK(judge("kernels(\"(a*)*b\") == 0") == expect::Verdict::confirmed);
  CHECK(judge("kernels(\"^cudnn_(a|aa)+_sm90$\") == 1") == expect::Verdict::confirmed);
  CHECK(judge("kernel.name ~ \"(a+)+_sm90\"") == expect::Verdict::confirmed);
}
