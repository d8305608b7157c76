// A plugin that asks for `bytes` of memory in its second run() (the warm-up, after the first call
// has been measured), to run into an experiment's memory limit, and writes the `touch` fraction
// of it; with `unchecked`, through malloc without looking at what it returned, as C code may, so
// that the limit ends it with SIGSEGV instead of an exception.
#include <expr/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

class Greedy final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"greedy",
            "allocates a block of host memory in its second call",
            {{"bytes", expr::ParamType::integer, std::int64_t{1} << 20, "bytes to allocate", {}},
             {"touch", expr::ParamType::number, 1.0, "the fraction of the block written", {}},
             {"unchecked", expr::ParamType::boolean, false, "allocate with malloc and write without checking that it succeeded", {}}},
            {expr::Device::cpu}};
  }

  void setup(expr::Context&, const expr::Params& p) override {
    bytes_ = static_cast<std::size_t>(p.integer("bytes"));
    touched_ = static_cast<std::size_t>(static_cast<double>(bytes_) * p.number("touch"));
    unchecked_ = p.boolean("unchecked");
  }

  void run(expr::Context& ctx) override {
    auto range = ctx.range("allocate");
    if (++calls_ != 2) return;
    if (unchecked_) {
      c_block_.reset(static_cast<char*>(std::malloc(bytes_)));
      std::memset(c_block_.get(), 1, std::min(touched_, bytes_));  // null when malloc failed: SIGSEGV
      return;
    }
    block_ = std::make_unique_for_overwrite<char[]>(bytes_);
    std::memset(block_.get(), 1, std::min(touched_, bytes_));
  }

 private:
  std::size_t bytes_ = 0, touched_ = 0;
  bool unchecked_ = false;
  std::unique_ptr<char[]> block_;
  std::unique_ptr<char, decltype(&std::free)> c_block_{nullptr, &std::free};
  int calls_ = 0;
};

}  // namespace

EXPR_PLUGIN(Greedy)
