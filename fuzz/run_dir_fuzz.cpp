// Fuzzes where a run directory's results.json sends `expr show`, `replay` and `merge`: any input is
// refused (an exception naming the problem) or read into a run whose trace files lie inside the run
// directory and whose experiment names, which replay and merge make into --out/experiments/NAME/,
// lie inside that folder too. A path that leads outside either is a finding (a trap), as is
// anything the sanitizers report. The check is this target's own, lexical, so that it holds any
// reader to the rule (util/paths.hpp), whatever the reader checks itself.
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iterator>
#include <string>

#include "report/run_directory.hpp"
#include "scratch_file.hpp"

namespace {

namespace fs = std::filesystem;

// Whether `path` is `dir` or below it, once "." and ".." are resolved as written.
bool within(const fs::path& dir, const fs::path& path) {
  const auto relative = path.lexically_normal().lexically_relative(dir.lexically_normal());
  return !relative.empty() && *relative.begin() != "..";
}

// Whether `name` makes exactly one folder of `dir`: not "." nor "..", no path.
bool one_folder(const fs::path& dir, const std::string& name) {
  const auto relative = (dir / name).lexically_normal().lexically_relative(dir.lexically_normal());
  return std::distance(relative.begin(), relative.end()) == 1 && relative != "." && relative != "..";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  expr::fuzz::scratch_file("results.json", data, size);
  const auto& root = expr::fuzz::scratch_dir();
  expr::report::RunResult run;
  try {
    run = expr::report::RunDirectory(root).read();
  } catch (const std::exception&) {
    return 0;
  }
  const auto out = root / "out" / "experiments";
  for (const auto& e : run.experiments) {
    if (!one_folder(out, e.measurement.experiment)) __builtin_trap();
    if (e.measurement.trace && !within(root, e.measurement.trace.file())) __builtin_trap();
    if (e.measurement.cold && e.measurement.cold->trace && !within(root, e.measurement.cold->trace.file())) __builtin_trap();
  }
  return 0;
}
