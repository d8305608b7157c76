// Fuzzes reading a run directory's results.json into measurements (report::RunDirectory::read,
// what `expr show` and `expr replay` start from, then each trace it names, read when first used): any input is a run or an exception naming the
// problem (`expr show` and `expr replay` catch any std::exception); anything else is a finding.
// The input is the results.json of a scratch run directory; a trace file it names is read from
// there (or not found).
#include <cstdint>
#include <exception>

#include "report/run_directory.hpp"
#include "scratch_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  expr::fuzz::scratch_file("results.json", data, size);
  try {
    for (const auto& e : expr::report::RunDirectory(expr::fuzz::scratch_dir()).read().experiments)
      if (e.measurement.trace) e.measurement.trace->record_count();
  } catch (const std::exception&) {
  }
  return 0;
}
