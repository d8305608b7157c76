// Fuzzes the expectation language, parser and binder (expect::compile): any input compiles or
// gets a SyntaxError, which is all series::plan handles; anything else is a finding.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "expect/check.hpp"

namespace {

// Three classes of input that crash, reach undefined behaviour or take seconds in code being
// fixed in another change (core/expect bounds nesting and regexes) are skipped, so that a run can
// reach its count; fuzz/known/expect holds an example of each. Remove this once that fix is in:
// - parentheses nested 1,000 deep or more: the parser recurses once per level and, under ASan,
//   overflows the stack at about 2,000;
// - a run of 19 or more decimal digits: in a regex argument (a back-reference) libstdc++'s regex
//   compiler overflows a long while reading it;
// - a brace, which the language does not use: in a regex argument ({n,m}) libstdc++'s compiler
//   copies the repeated part n times, so that under ASan a{999} takes half a second and a{99999}
//   half a minute (0.2 s without sanitizers, where it is refused as too many NFA states); a
//   count of 19 digits overflows as above.
bool known_finding(std::string_view text) {
  int depth = 0, deepest = 0;
  std::size_t digits = 0, longest_digits = 0;
  for (const char c : text) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    deepest = std::max(deepest, depth);
    digits = c >= '0' && c <= '9' ? digits + 1 : 0;
    longest_digits = std::max(longest_digits, digits);
  }
  return deepest >= 1000 || longest_digits >= 19 || text.find('{') != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The experiments of series 3, so that `other.metric` references can bind.
  static const std::vector<std::string> experiments{"naive", "naive_inplace", "sdpa_math", "sdpa_efficient", "sdpa_flash"};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (known_finding(text)) return -1;  // -1: not added to the corpus
  try {
    expr::expect::compile(text, experiments);
  } catch (const expr::expect::SyntaxError&) {
  }
  return 0;
}
