// The worker's Context: see context.hpp.
#include "runner/context.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace expr::runner {

log::Level log_level(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return log::Level::debug;
    case LogLevel::info: return log::Level::info;
    case LogLevel::warning: return log::Level::warning;
    case LogLevel::error: return log::Level::error;
  }
  return log::Level::info;
}

RangeHandle WorkerContext::begin_range(std::string_view name, RangeKind kind) {
  return recorder_.begin(name, kind == RangeKind::op ? trace::RangeKind::op : trace::RangeKind::plugin);
}

void WorkerContext::report_correctness(std::string_view what, double relative_error, double tolerance) {
  if (plugin_hook_ == "verify()") {
    measurement_.correctness.push_back({std::string(what), relative_error, tolerance});
    return;
  }
  if (violation_.empty())
    violation_ = fmt::format("plugin {} called report_correctness (\"{}\") in {}; correctness is accepted only from verify(), "
                             "which runs after the cold first call, because setup must not run the measured work",
                             measurement_.plugin, what, plugin_hook_);
}

void WorkerContext::report_fact(std::string_view key, std::string_view value) {
  measurement_.facts[std::string(key)] = std::string(value);
}

void WorkerContext::note_environment(std::string_view key, std::string_view value) {
  measurement_.environment[std::string(key)] = std::string(value);
}

bool WorkerContext::traces(TraceHook::Records what) const {
  return std::any_of(hooks_.begin(), hooks_.end(), [what](const auto& h) { return h->records() == what; });
}

void WorkerContext::start_hooks() {
  for (auto& h : hooks_) h->start(*this);
}

void WorkerContext::stop_hooks() {
  for (auto it = hooks_.rbegin(); it != hooks_.rend(); ++it) (*it)->stop();
}

void WorkerContext::setup_done() {
  for (auto& h : hooks_) h->setup_done();
}

std::vector<std::string> WorkerContext::seen_in_setup() const {
  std::vector<std::string> names;
  for (const auto& h : hooks_) {
    auto seen = h->seen_in_setup();
    names.insert(names.end(), std::make_move_iterator(seen.begin()), std::make_move_iterator(seen.end()));
  }
  return names;
}

}  // namespace expr::runner
