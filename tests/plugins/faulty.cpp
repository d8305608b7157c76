// A plugin that does a little real work, or fails in the way its `fault` parameter names.
#include <expr/plugin.hpp>

#include <chrono>
#include <cmath>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

class Faulty final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"faulty",
            "sums a vector; or fails on purpose",
            {{"fault", expr::ParamType::string, std::string("none"), "how to fail",
              {"none", "throw_in_setup", "throw_in_run", "segfault", "abort", "hang", "spawn_and_hang", "wrong_result",
               "correctness_in_setup"}},
             {"size", expr::ParamType::integer, std::int64_t{4096}, "elements summed per run", {}},
             {"print_mib", expr::ParamType::integer, std::int64_t{0}, "mebibytes setup() prints to stdout, as a chatty library might", {}}},
            {expr::Device::cpu}};
  }

  std::vector<expr::Guess> guesses(const expr::Params&) const override {
    return {{"ranges(\"^sum$\") == 1", "run() opens one range"}};
  }

  void setup(expr::Context& ctx, const expr::Params& p) override {
    fault_ = p.string("fault");
    if (fault_ == "throw_in_setup") throw std::runtime_error("faulty: failing in setup as asked");
    data_.resize(static_cast<std::size_t>(p.integer("size")));
    for (std::size_t i = 0; i < data_.size(); ++i) data_[i] = 1.0 / static_cast<double>(i + 1);
    // What plugins did before verify() existed: check the work in setup, warming it untimed.
    if (fault_ == "correctness_in_setup") ctx.report_correctness("sum vs the same sum", 0, 1e-12);
    ctx.report_fact("elements", std::to_string(data_.size()));
    const std::string line(1023, 'y');
    for (std::int64_t i = 0; i < p.integer("print_mib") * 1024; ++i) std::puts(line.c_str());
  }

  void verify(expr::Context& ctx) override {
    const double exact = sum();
    const double reported = fault_ == "wrong_result" ? exact * 1.5 : last_sum_;
    ctx.report_correctness("sum vs the same sum", std::fabs(reported - exact) / exact, 1e-12);
  }

  void run(expr::Context& ctx) override {
    auto range = ctx.range("sum");
    if (++calls_ == 2) {  // in the warm-up: the first call has been measured, so what came before is kept
      if (fault_ == "throw_in_run") throw std::runtime_error("faulty: failing in run as asked");
      if (fault_ == "segfault") std::raise(SIGSEGV);
      if (fault_ == "abort") std::abort();
      if (fault_ == "spawn_and_hang" && ::fork() == 0) {  // a helper process of its own, which must not outlive the run
        ::execl("/bin/sleep", "sleep", "3600", static_cast<char*>(nullptr));
        ::_exit(127);
      }
      if (fault_ == "hang" || fault_ == "spawn_and_hang") std::this_thread::sleep_for(std::chrono::hours(1));
    }
    last_sum_ = sum();
  }

 private:
  double sum() const {
    double s = 0;
    for (double x : data_) s += x;
    return s;
  }

  std::string fault_;
  std::vector<double> data_;
  double last_sum_ = 0;  // run()'s result, which verify() checks
  int calls_ = 0;
};

}  // namespace

EXPR_PLUGIN(Faulty)
