// expr's own diagnostics, through spdlog: one logger per process.
//
// The parent writes to the terminal (stderr, "warning: ..." from `warning` up unless --log-level
// or EXPR_LOG says otherwise) and, once a run directory exists, to its expr.log (from `debug` up,
// or `trace` when that was asked for). A worker process, forked from the parent, writes to its own
// stderr, which is its worker.log, and hands each line to the parent (runner/worker.hpp), which
// logs it under the experiment's name. Plugins' ctx.log lines travel the same way.
//
// The progress line and the report are outputs, not logging (report/sinks.hpp); problems in a
// series file are rendered by util/source.hpp.
#pragma once

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

namespace expr::log {

enum class Level { trace, debug, info, warning, error };
inline constexpr std::array<std::string_view, 5> level_names{"trace", "debug", "info", "warning", "error"};
std::string_view to_string(Level level);
std::optional<Level> level_from(std::string_view name);  // one of level_names

// What the terminal shows (the parent's): `level` and above.
void set_terminal_level(Level level);
// Appends every line from `debug` up (from `trace` when the terminal shows trace) to `file`, the
// run's expr.log, flushed line by line. Throws std::runtime_error naming the file when it cannot
// be opened.
void open_file(const std::filesystem::path& file);

// In a forked worker: the parent's terminal and file are left behind. Lines go to the worker's
// stderr and, when `forward` is set, to the parent through it; levels stay what the parent chose.
using Forward = std::function<void(Level, std::string_view)>;
void become_worker(Forward forward);

bool enabled(Level level);
// Never throws: logging happens in callbacks and noexcept paths (CUPTI's buffer callbacks).
void write(Level level, std::string_view message) noexcept;
// In a worker: its own log only, not handed to the parent.
void write_local(Level level, std::string_view message) noexcept;

template <class... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) noexcept {
  if (!enabled(level)) return;
  try {
    write(level, fmt::format(format, std::forward<Args>(args)...));
  } catch (...) {
  }
}
template <class... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) noexcept {
  at(Level::debug, format, std::forward<Args>(args)...);
}
template <class... Args>
void info(fmt::format_string<Args...> format, Args&&... args) noexcept {
  at(Level::info, format, std::forward<Args>(args)...);
}
template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) noexcept {
  at(Level::warning, format, std::forward<Args>(args)...);
}
template <class... Args>
void error(fmt::format_string<Args...> format, Args&&... args) noexcept {
  at(Level::error, format, std::forward<Args>(args)...);
}

}  // namespace expr::log
