// A plugin that asks for `bytes` of memory in its second run() (the warm-up, after the first call
// has been measured), to run into an experiment's memory limit.
#include <expr/plugin.hpp>

#include <cstdint>
#include <memory>

namespace {

class Greedy final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"greedy",
            "allocates a block of host memory in its second call",
            {{"bytes", expr::ParamType::integer, std::int64_t{1} << 20, "bytes to allocate", {}}},
            {expr::Device::cpu}};
  }

  void setup(expr::Context&, const expr::Params& p) override { bytes_ = static_cast<std::size_t>(p.integer("bytes")); }

  void run(expr::Context& ctx) override {
    auto range = ctx.range("allocate");
    if (++calls_ == 2) block_ = std::make_unique<char[]>(bytes_);  // zeroed: every page touched
  }

 private:
  std::size_t bytes_ = 0;
  std::unique_ptr<char[]> block_;
  int calls_ = 0;
};

}  // namespace

EXPR_PLUGIN(Greedy)
