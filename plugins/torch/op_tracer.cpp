#include "expr_torch/op_tracer.hpp"

#include <ATen/record_function.h>

#include <atomic>
#include <memory>
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

class OpTracer final : public expr::TraceHook {
 public:
  void start(expr::Context& ctx) override {
    active.store(&ctx, std::memory_order_release);
    handle_ = at::addGlobalCallback(at::RecordFunctionCallback(&on_enter, &on_exit).scopes({at::RecordScope::FUNCTION}));
  }
  void stop() override {
    at::removeCallback(handle_);
    active.store(nullptr, std::memory_order_release);
  }

 private:
  at::CallbackHandle handle_ = 0;
};

}  // namespace

void trace_ops(expr::Context& ctx) { ctx.add_trace_hook(std::make_unique<OpTracer>()); }

}  // namespace expr_torch
