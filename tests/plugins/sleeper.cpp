// A plugin whose run() takes a known time that grows with a parameter: it busy-waits
// base_us * (size / 1024)^k microseconds, so guesses about how a sweep grows have a right answer.
// Its setup() can sleep, to make each point of a sweep slow without keeping a core busy (the
// --resume tests stop a run between points).
#include <expr/plugin.hpp>

#include <chrono>
#include <cmath>
#include <thread>

namespace {

class Sleeper final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"sleeper",
            "busy-waits base_us * (size / 1024)^k microseconds per run",
            {{"size", expr::ParamType::integer, std::int64_t{1024}, "the size the time grows with", {}},
             {"k", expr::ParamType::number, 1.0, "the exponent of the growth", {}},
             {"base_us", expr::ParamType::number, 50.0, "microseconds at size 1024", {}},
             {"setup_ms", expr::ParamType::integer, std::int64_t{0}, "milliseconds setup() sleeps", {}}},
            {expr::Device::cpu}};
  }

  void setup(expr::Context&, const expr::Params& p) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(p.integer("setup_ms")));
    wait_ = std::chrono::duration<double, std::micro>(p.number("base_us") * std::pow(static_cast<double>(p.integer("size")) / 1024.0, p.number("k")));
  }

  void run(expr::Context& ctx) override {
    auto range = ctx.range("wait");
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait_);
    while (std::chrono::steady_clock::now() < until) {
    }
  }

 private:
  std::chrono::duration<double, std::micro> wait_{};
};

}  // namespace

EXPR_PLUGIN(Sleeper)
