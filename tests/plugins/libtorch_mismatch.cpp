// A plugin whose build tag names another LibTorch than expr's (EXPR_PLUGIN_LIBTORCH is set to
// 0.1.0 by its build), as one built against another LibTorch's expr::torch would: the loader must
// refuse it before anything of it runs. It links no LibTorch itself.
#include <expr/plugin.hpp>

namespace {

class LibtorchMismatch final : public expr::Plugin {
 public:
  expr::Description describe() const override { return {"libtorch_mismatch", "never loaded", {}, {expr::Device::cpu}}; }
  void setup(expr::Context&, const expr::Params&) override {}
  void run(expr::Context&) override {}
};

}  // namespace

EXPR_PLUGIN(LibtorchMismatch)
