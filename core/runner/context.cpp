#include "runner/context.hpp"

namespace expr::runner {

RangeHandle WorkerContext::begin_range(std::string_view name, RangeKind kind) {
  return recorder_.begin(name, kind == RangeKind::op ? trace::RangeKind::op : trace::RangeKind::plugin);
}

void WorkerContext::report_correctness(std::string_view what, double relative_error, double tolerance) {
  measurement_.correctness.push_back({std::string(what), relative_error, tolerance});
}

void WorkerContext::report_fact(std::string_view key, std::string_view value) {
  measurement_.facts[std::string(key)] = std::string(value);
}

void WorkerContext::note_environment(std::string_view key, std::string_view value) {
  measurement_.environment[std::string(key)] = std::string(value);
}

void WorkerContext::start_hooks() {
  for (auto& h : hooks_) h->start(*this);
}

void WorkerContext::stop_hooks() {
  for (auto it = hooks_.rbegin(); it != hooks_.rend(); ++it) (*it)->stop();
}

}  // namespace expr::runner
