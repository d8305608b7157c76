// Fuzzes reading a run directory's results.json into measurements (report::read_results, what
// `expr show` and `expr replay` start from): any input is a run or an exception naming the
// problem (`expr show` and `expr replay` catch any std::exception); anything else is a finding.
// The input is the results.json of a scratch run directory; a trace file it names is read from
// there (or not found).
#include <cstdint>
#include <exception>

#include "report/results_file.hpp"
#include "scratch_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  expr::fuzz::scratch_file("results.json", data, size);
  try {
    expr::report::read_results(expr::fuzz::scratch_dir());
  } catch (const std::exception&) {
  }
  return 0;
}
