// Fuzzes the native trace file reader (trace::load, what `expr replay` and the runner read): any
// input is a linked trace or an exception naming the problem (the runner and `expr replay` catch
// any std::exception); anything else is a finding.
#include <cstdint>
#include <exception>

#include "scratch_file.hpp"
#include "trace/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = expr::fuzz::scratch_file("expr_trace.json", data, size);
  try {
    expr::trace::load(file);
  } catch (const std::exception&) {
  }
  return 0;
}
