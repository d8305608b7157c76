// A plugin that asks for `bytes` of memory in its second run() (the warm-up, after the first call
// has been measured), to run into an experiment's memory limit, and writes the `touch` fraction
// of it.
#include <expr/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

namespace {

class Greedy final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"greedy",
            "allocates a block of host memory in its second call",
            {{"bytes", expr::ParamType::integer, std::int64_t{1} << 20, "bytes to allocate", {}},
             {"touch", expr::ParamType::number, 1.0, "the fraction of the block written", {}}},
            {expr::Device::cpu}};
  }

  void setup(expr::Context&, const expr::Params& p) override {
    bytes_ = static_cast<std::size_t>(p.integer("bytes"));
    touched_ = static_cast<std::size_t>(static_cast<double>(bytes_) * p.number("touch"));
  }

  void run(expr::Context& ctx) override {
    auto range = ctx.range("allocate");
    if (++calls_ == 2) {
      block_ = std::make_unique_for_overwrite<char[]>(bytes_);
      std::memset(block_.get(), 1, std::min(touched_, bytes_));
    }
  }

 private:
  std::size_t bytes_ = 0, touched_ = 0;
  std::unique_ptr<char[]> block_;
  int calls_ = 0;
};

}  // namespace

EXPR_PLUGIN(Greedy)
