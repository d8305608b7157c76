#include "expr_torch/op_tracer.hpp"

#include <ATen/record_function.h>

#include <atomic>
#include <memory>

namespace expr_torch {

namespace {

// RecordFunction callbacks are plain function pointers: the context they report to is global.
// The runner traces one experiment at a time per process, so one is enough.
std::atomic<expr::Context*> active{nullptr};

struct OpRange : at::ObserverContext {
  explicit OpRange(expr::RangeHandle h) : handle(h) {}
  expr::RangeHandle handle;
};

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  auto* ctx = active.load(std::memory_order_acquire);
  if (!ctx) return nullptr;
  return std::make_unique<OpRange>(ctx->begin_range(fn.name(), expr::RangeKind::op));
}

void on_exit(const at::RecordFunction&, at::ObserverContext* observed) {
  auto* ctx = active.load(std::memory_order_acquire);
  if (ctx && observed) ctx->end_range(static_cast<OpRange*>(observed)->handle);
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
