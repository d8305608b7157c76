// A plugin for the history and comparison tests: run() busy-waits `delay` microseconds, so a
// slowdown can be injected by changing one number; with `extra_copy` it also copies a small buffer
// inside a range of its own, which changes the trace's structure and not the timing. With
// `workers_file`, each worker process counts itself in that file at setup, and the first
// `slow_workers` of them wait `slow_delay` instead: a machine slower while a run's first workers
// measure, and back to itself after, which no code change explains.
#include <expr/plugin.hpp>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

class Waiter final : public expr::Plugin {
 public:
  expr::Description describe() const override {
    return {"waiter",
            "busy-waits delay microseconds per run; extra_copy adds a 4 KiB copy in a range 'copy'",
            {{"delay", expr::ParamType::number, 200.0, "microseconds each run() busy-waits", {}},
             {"extra_copy", expr::ParamType::boolean, false, "also copy 4 KiB inside a range 'copy'", {}},
             {"workers_file", expr::ParamType::string, std::string(), "a file each worker counts itself in at setup", {}},
             {"slow_workers", expr::ParamType::integer, std::int64_t{0}, "how many workers (counted in workers_file) wait slow_delay", {}},
             {"slow_delay", expr::ParamType::number, 0.0, "microseconds the first slow_workers workers wait instead of delay", {}}},
            {expr::Device::cpu}};
  }

  void setup(expr::Context&, const expr::Params& p) override {
    wait_ = std::chrono::duration<double, std::micro>(p.number("delay"));
    if (const auto file = p.string("workers_file"); !file.empty()) {
      std::ofstream(file, std::ios::app) << "worker\n";
      std::ifstream counted(file);
      std::int64_t workers = 0;
      for (std::string line; std::getline(counted, line);) ++workers;
      if (workers <= p.integer("slow_workers")) wait_ = std::chrono::duration<double, std::micro>(p.number("slow_delay"));
    }
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
