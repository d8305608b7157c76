// A plugin whose strings are not UTF-8 (Latin-1 and stray bytes, as a C library might hand them
// over): its fact, its log line, its range and its guess's reason. Its run must still end in a
// readable results.json.
#include <expr/plugin.hpp>

namespace {

constexpr const char* latin1_cafe = "caf\xe9";
constexpr const char* stray_bytes = "\xff\xfe ok";

class Garbled final : public expr::Plugin {
 public:
  expr::Description describe() const override { return {"garbled", "reports text that is not UTF-8", {}, {expr::Device::cpu}}; }

  std::vector<expr::Guess> guesses(const expr::Params&) const override { return {{"ranges(\"^r\") == 1", stray_bytes}}; }

  void setup(expr::Context& ctx, const expr::Params&) override {
    ctx.report_fact("drink", latin1_cafe);
    ctx.info(stray_bytes);
  }

  void run(expr::Context& ctx) override { auto range = ctx.range(std::string("r") + latin1_cafe); }
};

}  // namespace

EXPR_PLUGIN(Garbled)
