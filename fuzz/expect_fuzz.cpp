// Fuzzes the expectation language, parser and binder (expect::compile): any input compiles or
// gets a SyntaxError, which is all series::plan handles; anything else is a finding. fuzz/known/expect
// holds what it found: nesting that overflowed the stack, regex counts and back-references that
// overflowed libstdc++'s integers or took seconds to compile (now bounded: core/expect).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "expect/check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The experiments of series 3, so that `other.metric` references can bind.
  static const std::vector<std::string> experiments{"naive", "naive_inplace", "sdpa_math", "sdpa_efficient", "sdpa_flash"};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    expr::expect::compile(text, experiments);
  } catch (const expr::expect::SyntaxError&) {
  }
  return 0;
}
