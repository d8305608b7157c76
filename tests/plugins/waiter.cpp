// A plugin for the history and comparison tests: run() busy-waits `delay` microseconds, so a
// slowdown can be injected by changing one number; with `extra_copy` it also copies a small buffer
// inside a range of its own, which changes the trace's structure and not the timing.
#include <expr/plugin.hpp>

#include <chrono>
#include <cstring>
#include <vector>

namespace {

class Waiter final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"waiter",
            "busy-waits delay microseconds per run; extra_copy adds a 4 KiB copy in a range 'copy'",
            {{"delay", expr::ParamType::number, 200.0, "microseconds each run() busy-waits", {}},
             {"extra_copy", expr::ParamType::boolean, false, "also copy 4 KiB inside a range 'copy'", {}}},
            {expr::Device::cpu}};
  }

  void setup(expr::Context&, const expr::Params& p) override {
    wait_ = std::chrono::duration<double, std::micro>(p.number("delay"));
    extra_copy_ = p.boolean("extra_copy");
    from_.assign(4096, 1);
    to_.assign(4096, 0);
  }

  void run(expr::Context& ctx) override {
    {
      auto range = ctx.range("wait");
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait_);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    if (extra_copy_) {
      auto range = ctx.range("copy");
      std::memcpy(to_.data(), from_.data(), from_.size());
    }
  }

 private:
  std::chrono::duration<double, std::micro> wait_{};
  bool extra_copy_ = false;
  std::vector<char> from_, to_;
};

}  // namespace

EXPR_PLUGIN(Waiter)
