// @NAME@: an expr plugin. z = a*x + y over n floats on the CPU (saxpy), a starting point: replace
// the work, keep the hooks. How each hook is used: expr's docs/writing-plugins.md.
#include <expr/plugin.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

class @CLASS@ final : public expr::Plugin {
 public:
  // In expr's parent process (`expr list`, `validate`, `run`): the name, parameters and devices.
  expr::Description describe() const override {
    return {"@NAME@",
            "saxpy on the CPU: z = a*x + y over n floats",
            {{"n", expr::ParamType::integer, std::int64_t{1} << 20, "elements", {}},
             {"a", expr::ParamType::number, 2.0, "the scale", {}}},
            {expr::Device::cpu}};
  }

  // Inputs only: setup must not run the measured work, or the cold first call would be warm.
  void setup(expr::Context& ctx, const expr::Params& p) override {
    const auto n = p.integer("n");
    if (n <= 0) throw std::invalid_argument("@NAME@: n must be positive");
    a_ = static_cast<float>(p.number("a"));
    x_.resize(static_cast<std::size_t>(n));
    y_.resize(x_.size());
    z_.assign(x_.size(), NAN);  // allocated here, not in run(): the measured region allocates nothing
    for (std::size_t i = 0; i < x_.size(); ++i) {
      x_[i] = 1.0f + 0.25f * static_cast<float>(i % 7);
      y_[i] = 0.5f * static_cast<float>(i % 3);
    }
    ctx.report_fact("elements", std::to_string(n));
  }

  // The measured region, called many times: the cold first call, warm-up, timing, tracing.
  void run(expr::Context& ctx) override {
    auto range = ctx.range("saxpy");
    for (std::size_t i = 0; i < z_.size(); ++i) z_[i] = a_ * x_[i] + y_[i];
  }

  // Once, right after the cold first call: that call's output against a float64 reference.
  void verify(expr::Context& ctx) override {
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < z_.size(); ++i) {
      const double want = static_cast<double>(a_) * x_[i] + y_[i];
      error += (z_[i] - want) * (z_[i] - want);
      norm += want * want;
    }
    ctx.report_correctness("z vs a float64 reference", std::sqrt(error / norm), 1e-6);
  }

  // In the parent: what the trace should show, judged after the run like the series' guesses.
  std::vector<expr::Guess> guesses(const expr::Params&) const override {
    return {{"ranges(\"^saxpy$\") == 1", "run() opens one range"}};
  }

  // For gbps and tflops: 2 FLOPs an element; x and y read, z written.
  std::optional<expr::Work> work(const expr::Params& p) const override {
    const auto n = static_cast<double>(p.integer("n"));
    return expr::Work{2 * n, 3 * n * sizeof(float)};
  }

 private:
  float a_ = 0;
  std::vector<float> x_, y_, z_;
};

}  // namespace

EXPR_PLUGIN(@CLASS@)
