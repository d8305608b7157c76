// How core/cupti reports what does not stop collection, through the worker's logger
// (util/log.hpp), which reaches its worker.log and the run's expr.log: warn() for a problem, the
// terminal shows it; note() for what CUPTI was asked and answered, which only the logs keep. Never
// throws, since it is called from CUPTI's callbacks and noexcept paths.
#pragma once

#include <fmt/format.h>

#include <utility>

#include "util/log.hpp"

namespace expr::cupti {

template <class... Args>
void report(log::Level level, fmt::format_string<Args...> format, Args&&... args) noexcept {
  if (!log::enabled(level)) return;
  try {
    log::write(level, "cupti: " + fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
  }
}

template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) noexcept {
  report(log::Level::warning, format, std::forward<Args>(args)...);
}

template <class... Args>
void note(fmt::format_string<Args...> format, Args&&... args) noexcept {
  report(log::Level::info, format, std::forward<Args>(args)...);
}

}  // namespace expr::cupti
