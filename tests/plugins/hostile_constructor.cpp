// A plugin whose static constructor does what no loader can survive in its own process: with
// HOSTILE_CRASHES it raises SIGSEGV, with HOSTILE_EXITS it calls _exit(7), with
// HOSTILE_BLOCKS it waits forever. Built once per behaviour, into a folder of its own (not on the
// test plugin path, where `expr list` would meet them), for the loader's child-process tests.
#include <expr/plugin.hpp>

#include <unistd.h>

#include <csignal>

namespace {

struct Hostile {
  Hostile() {
#if defined(HOSTILE_CRASHES)
    // The signal a bad pointer brings, without the undefined behaviour, which UBSan would stop at
    // first in the sanitizer build (and end the process its own way).
    std::raise(SIGSEGV);
#elif defined(HOSTILE_EXITS)
    ::_exit(7);
#elif defined(HOSTILE_BLOCKS)
    for (;;) ::pause();
#endif
  }
} hostile;

class Constructor final : public expr::Plugin {
 public:
  expr::Description describe() const override { return {HOSTILE_NAME, "never gets this far", {}, {expr::Device::cpu}}; }
  void setup(expr::Context&, const expr::Params&) override {}
  void run(expr::Context&) override {}
};

}  // namespace

EXPR_PLUGIN(Constructor)
