// A plugin whose first run() initialises something lazily, as cuBLAS or cuDNN do on their first
// call: it sleeps `lazy_ms` once, inside a range "lazy init", then sums a small vector like every
// later call. It has no verify(), so it reports no correctness figure.
#include <expr/plugin.hpp>

#include <chrono>
#include <thread>
#include <vector>

namespace {

class LazyInit final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"lazy_init",
            "sums a vector; the first run() first sleeps once, as a lazy initialisation would take",
            {{"lazy_ms", expr::ParamType::integer, std::int64_t{50}, "milliseconds the first run() sleeps", {}}},
            {expr::Device::cpu}};
  }

  void setup(expr::Context&, const expr::Params& p) override {
    lazy_ = std::chrono::milliseconds(p.integer("lazy_ms"));
    data_.assign(1024, 0.5);
  }

  void run(expr::Context& ctx) override {
    if (!initialised_) {
      auto range = ctx.range("lazy init");
      std::this_thread::sleep_for(lazy_);
      initialised_ = true;
    }
    auto range = ctx.range("sum");
    double s = 0;
    for (double x : data_) s += x;
    sum_ = s;
  }

 private:
  std::chrono::milliseconds lazy_{0};
  std::vector<double> data_;
  double sum_ = 0;
  bool initialised_ = false;
};

}  // namespace

EXPR_PLUGIN(LazyInit)
