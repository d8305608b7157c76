// LibTorch's allocator events into the trace: see memory_tracer.hpp.
#include "expr_torch/memory_tracer.hpp"

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <memory>

namespace expr_torch {

namespace {

// The totals' type of c10's reporting hook: int64_t in LibTorch 1.13, size_t in later ones.
template <class>
struct TotalsOf;
template <class Class, class Result, class Address, class Bytes, class Total, class Device>
struct TotalsOf<Result (Class::*)(Address, Bytes, Total, Total, Device)> {
  using type = Total;
};
using Total = TotalsOf<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::type;

// c10's allocators report each allocation and release to the reporter installed as this thread's
// profiler state, which is what torch.profiler's profile_memory installs.
class Reporter final : public c10::MemoryReportingInfoBase {
 public:
  explicit Reporter(expr::Context& ctx) : ctx_(ctx) {}

  void reportMemoryUsage(void* address, std::int64_t bytes, Total total_allocated, Total total_reserved, c10::Device device) override {
    ctx_.record_allocation(reinterpret_cast<std::uintptr_t>(address), bytes, static_cast<std::int64_t>(total_allocated),
                           static_cast<std::int64_t>(total_reserved), device.is_cuda() ? device.index() : -1);
  }
  bool memoryProfilingEnabled() const override { return true; }

 private:
  expr::Context& ctx_;
};

class MemoryTracer final : public expr::TraceHook {
 public:
  void start(expr::Context& ctx) override {
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, std::make_shared<Reporter>(ctx));
  }
  void stop() override { c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE); }
  Records records() const override { return Records::allocations; }
};

}  // namespace

void trace_memory(expr::Context& ctx) { ctx.add_trace_hook(std::make_unique<MemoryTracer>()); }

}  // namespace expr_torch
