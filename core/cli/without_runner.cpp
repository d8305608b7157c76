// The commands that run experiments (run, calibrate, slurm) in an expr built without CUDA
// (EXPR_WITH_CUDA=OFF), which has no runner: each says so and exits with bad_input, nothing run,
// instead of being missing from the command line, so a script or a user typing a command from the
// README learns why. run.cpp is these commands where there is a runner.
#include <fmt/format.h>

#include "cli/commands.hpp"

namespace expr::cli {

namespace {

int no_runner(const char* command) {
  fmt::print(stderr,
             "expr {}: this expr was built without CUDA (EXPR_WITH_CUDA=OFF) and cannot run experiments; nothing ran.\n"
             "It reads, judges and compares recorded runs: show, replay, compare, across, history, merge, validate.\n"
             "Build with CUDA to run experiments (docs/install.md).\n",
             command);
  return bad_input;
}

}  // namespace

const bool has_runner = false;

int run(const session::RunArgs&) { return no_runner("run"); }
int calibrate(const session::CalibrateArgs&) { return no_runner("calibrate"); }
int slurm(const session::SlurmArgs&) { return no_runner("slurm"); }

}  // namespace expr::cli
