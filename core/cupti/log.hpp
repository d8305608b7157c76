// The one way core/cupti reports a problem that does not stop collection: a warning through the
// worker's logger (util/log.hpp), which reaches its worker.log and the run's expr.log. Never
// throws, since it is called from CUPTI's callbacks and noexcept paths.
#pragma once

#include <fmt/format.h>

#include <utility>

#include "util/log.hpp"

namespace expr::cupti {

template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) noexcept {
  if (!log::enabled(log::Level::warning)) return;
  try {
    log::write(log::Level::warning, "cupti: " + fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
  }
}

}  // namespace expr::cupti
