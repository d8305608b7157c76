// Fuzzes the series reader (YAML included) and the --axis option: any input gets a list of
// problems (util::InputError) or a series; `expr validate` and `expr run` handle nothing else, so
// any other exception is a finding, as is anything the sanitizers report, or an input that takes
// longer than the fuzzer's -timeout (an axis generator that never ends). Each line of the input
// that starts with "# --axis " (a YAML comment, so the series reads the same) is also given to the
// --axis parser, which expands generators as the file's axes do.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "scratch_file.hpp"
#include "series/axes.hpp"
#include "series/series.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = expr::fuzz::scratch_file("series.yaml", data, size);
  try {
    expr::series::read(file);
  } catch (const expr::util::InputError&) {
  }
  constexpr std::string_view option = "# --axis ";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find('\n', at), text.size());
    if (const auto line = text.substr(at, end - at); line.starts_with(option)) {
      try {
        expr::series::parse_axis_override(std::string(line.substr(option.size())));
      } catch (const std::invalid_argument&) {
      }
    }
    at = end + 1;
  }
  return 0;
}
