// An expr built without CUDA (EXPR_WITH_CUDA=OFF; compiled only there): the commands that run
// experiments say that this build cannot, exit with 2 and make nothing, and the help marks them;
// the rest of the suite checks that the other commands work as in a full build.
#include <doctest/doctest.h>

#include <filesystem>

#include "harness.hpp"

namespace fs = std::filesystem;

TEST_CASE("without CUDA, run, calibrate and slurm say that this build cannot run experiments, exit 2 and make nothing") {
  const auto dir = e2e::scratch("without_runner");
  e2e::write(dir, "quick.yaml", "series: quick\ndefaults:\n  device: cpu\nexperiments:\n  - name: fine\n    plugin: faulty\n");
  REQUIRE(e2e::expr(dir, "validate quick.yaml").exit_code == 0);  // a series that a full build would run
  for (const char* command : {"run quick.yaml --out run", "calibrate quick.yaml --out run", "slurm quick.yaml --shards 2 --out run"}) {
    const auto o = e2e::expr(dir, command);
    INFO(command, "\n", o.all());
    CHECK(o.exit_code == 2);
    CHECK(e2e::has(o, "built without CUDA (EXPR_WITH_CUDA=OFF) and cannot run experiments; nothing ran"));
    CHECK(e2e::has(o, "show, replay, compare, across, history, merge, validate"));
    CHECK_FALSE(fs::exists(dir / "run"));
    CHECK_FALSE(fs::exists(dir / "runs"));
  }
  const auto help = e2e::expr(dir, "--help");
  INFO(help.all());
  CHECK(e2e::has(help.out, "run a series: time, trace and check every experiment (not in this build: built without CUDA)"));
  CHECK(e2e::has(help.out, "list what guesses can ask about"));
}
