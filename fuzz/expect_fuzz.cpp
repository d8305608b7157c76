// Fuzzes the expectation language, parser and binder (expect::compile): any input compiles or
// gets a SyntaxError, which is all series::plan handles; anything else is a finding.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "expect/check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The experiments of series 3, so that `other.metric` references can bind.
  static const std::vector<std::string> experiments{"naive", "naive_inplace", "sdpa_math", "sdpa_efficient", "sdpa_flash"};
  try {
    expr::expect::compile(std::string_view(reinterpret_cast<const char*>(data), size), experiments);
  } catch (const expr::expect::SyntaxError&) {
  }
  return 0;
}
