// Fuzzes the series reader (YAML included): any input gets a list of problems (util::InputError)
// or a series; `expr validate` and `expr run` handle nothing else, so any other exception is a
// finding, as is anything the sanitizers report.
#include <cstdint>

#include "scratch_file.hpp"
#include "series/series.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = expr::fuzz::scratch_file("series.yaml", data, size);
  try {
    expr::series::read(file);
  } catch (const expr::util::InputError&) {
  }
  return 0;
}
