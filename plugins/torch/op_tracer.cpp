// The ATen op observer: see op_tracer.hpp.
#include "expr_torch/op_tracer.hpp"

#include <ATen/record_function.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace expr_torch {

namespace {

// RecordFunction callbacks are plain function pointers: the context they report to is global.
// The runner traces one experiment at a time per process, so one is enough.
std::atomic<expr::Context*> active{nullptr};

// Ops nest per thread, so the handles of the open ones live on a per-thread stack rather than in an
// ObserverContext allocated for every op: this is the hot path of a launch-bound loop.
thread_local std::vector<expr::RangeHandle> open_ops;

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (auto* ctx = active.load(std::memory_order_acquire)) open_ops.push_back(ctx->begin_range(fn.name(), expr::RangeKind::op));
  return nullptr;
}

void on_exit(const at::RecordFunction&, at::ObserverContext*) {
  auto* ctx = active.load(std::memory_order_acquire);
  if (!ctx || open_ops.empty()) return;
  ctx->end_range(open_ops.back());
  open_ops.pop_back();
}

// The setup watch: names of the ops setup() dispatched outside other ops. Only setup pays for it.
struct SetupOps {
  std::mutex mutex;
  std::set<std::string> outermost;
};
std::atomic<SetupOps*> watched{nullptr};
thread_local int watch_depth = 0;

std::unique_ptr<at::ObserverContext> on_setup_enter(const at::RecordFunction& fn) {
  if (watch_depth++ == 0)
    if (auto* ops = watched.load(std::memory_order_acquire)) {
      std::lock_guard lock(ops->mutex);
      ops->outermost.insert(fn.name());
    }
  return nullptr;
}

void on_setup_exit(const at::RecordFunction&, at::ObserverContext*) { --watch_depth; }

at::CallbackHandle observe(at::RecordFunctionCallback::StartCallback enter, at::RecordFunctionCallback::EndCallback exit) {
  return at::addGlobalCallback(at::RecordFunctionCallback(enter, exit).scopes({at::RecordScope::FUNCTION}));
}

class OpTracer final : public expr::TraceHook {
 public:
  OpTracer() {
    watched.store(&setup_ops_, std::memory_order_release);
    setup_watch_ = observe(&on_setup_enter, &on_setup_exit);
  }
  ~OpTracer() override { setup_done(); }

  void setup_done() override {
    if (!setup_watch_) return;
    at::removeCallback(*setup_watch_);
    setup_watch_.reset();
    watched.store(nullptr, std::memory_order_release);
  }

  std::vector<std::string> seen_in_setup() const override {
    return {setup_ops_.outermost.begin(), setup_ops_.outermost.end()};
  }

  void start(expr::Context& ctx) override {
    active.store(&ctx, std::memory_order_release);
    handle_ = observe(&on_enter, &on_exit);
  }
  void stop() override {
    at::removeCallback(handle_);
    active.store(nullptr, std::memory_order_release);
  }

 private:
  SetupOps setup_ops_;
  std::optional<at::CallbackHandle> setup_watch_;
  at::CallbackHandle handle_ = 0;
};

}  // namespace

void trace_ops(expr::Context& ctx) { ctx.add_trace_hook(std::make_unique<OpTracer>()); }

}  // namespace expr_torch
