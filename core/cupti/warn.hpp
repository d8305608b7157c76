// The one way core/cupti reports a problem that does not stop collection: a line on the worker's
// log (its stderr). Never throws, since it is called from CUPTI's callbacks and noexcept paths.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <utility>

namespace expr::cupti {

template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    fmt::print(stderr, "expr: cupti: {}\n", fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
  }
}

}  // namespace expr::cupti
