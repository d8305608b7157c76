// The process's logger: see log.hpp.
#include "util/log.hpp"

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <stdexcept>

namespace expr::log {

namespace {

spdlog::level::level_enum native(Level level) {
  switch (level) {
    case Level::trace: return spdlog::level::trace;
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warning: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

Level from_native(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return Level::trace;
    case spdlog::level::debug: return Level::debug;
    case spdlog::level::info: return Level::info;
    case spdlog::level::warn: return Level::warning;
    default: return Level::error;
  }
}

// Files (expr.log, worker.log) carry the time, in UTC, and the level.
std::unique_ptr<spdlog::formatter> file_format() {
  return std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
}

// stderr, "warning: ..." a line. On a terminal the progress line (report/sinks.cpp) is cleared
// first; its next update draws it again below.
class TerminalSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  TerminalSink() { set_formatter_(std::make_unique<spdlog::pattern_formatter>("%l: %v")); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    if (tty_) std::fputs("\r\033[K", stderr);
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  bool tty_ = ::isatty(STDERR_FILENO) == 1;
};

// A worker's lines, handed to its parent as they are written.
class ForwardSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ForwardSink(Forward forward) : forward_(std::move(forward)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    forward_(from_native(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  Forward forward_;
};

struct State {
  Level terminal_level = Level::warning;
  std::shared_ptr<spdlog::sinks::sink> terminal = std::make_shared<TerminalSink>();
  std::shared_ptr<spdlog::sinks::sink> file;                                    // expr.log, once open
  std::shared_ptr<spdlog::logger> all = std::make_shared<spdlog::logger>("expr", terminal);
  std::shared_ptr<spdlog::logger> local = all;  // a worker's own log only; the same logger in the parent

  State() {
    terminal->set_level(native(terminal_level));
    all->flush_on(spdlog::level::trace);
    update_levels();
  }

  // Files keep debug and up, or whatever more the terminal shows.
  Level file_level() const { return std::min(terminal_level, Level::debug); }

  // A logger passes what any of its sinks wants, so enabled() answers without formatting.
  void update_levels() {
    for (auto* logger : {all.get(), local.get()}) {
      auto lowest = spdlog::level::off;
      for (const auto& s : logger->sinks()) lowest = std::min(lowest, s->level());
      logger->set_level(lowest);
    }
  }
};

State& state() {
  static State s;
  return s;
}

}  // namespace

std::string_view to_string(Level level) { return level_names[static_cast<std::size_t>(level)]; }

std::optional<Level> level_from(std::string_view name) {
  for (std::size_t i = 0; i < level_names.size(); ++i)
    if (level_names[i] == name) return static_cast<Level>(i);
  return std::nullopt;
}

void set_terminal_level(Level level) {
  auto& s = state();
  s.terminal_level = level;
  if (s.terminal) s.terminal->set_level(native(level));
  if (s.file) s.file->set_level(native(s.file_level()));
  s.update_levels();
}

void open_file(const std::filesystem::path& file) {
  auto& s = state();
  std::shared_ptr<spdlog::sinks::sink> sink;
  try {
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file.string(), false);
  } catch (const spdlog::spdlog_ex& e) {
    throw std::runtime_error(fmt::format("cannot open the log {}: {}", file.string(), e.what()));
  }
  sink->set_formatter(file_format());
  sink->set_level(native(s.file_level()));
  auto& sinks = s.all->sinks();
  if (s.file) sinks.erase(std::remove(sinks.begin(), sinks.end(), s.file), sinks.end());
  sinks.push_back(sink);
  s.file = std::move(sink);
  s.update_levels();
}

void become_worker(Forward forward) {
  auto& s = state();
  // The child is single-threaded here: nothing else holds the loggers.
  auto own = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  own->set_formatter(file_format());
  own->set_level(native(s.file_level()));
  s.local = std::make_shared<spdlog::logger>("expr", own);
  s.local->flush_on(spdlog::level::trace);
  auto& sinks = s.all->sinks();
  sinks.assign({own});
  if (forward) {
    auto to_parent = std::make_shared<ForwardSink>(std::move(forward));
    to_parent->set_level(native(s.file_level()));
    sinks.push_back(std::move(to_parent));
  }
  s.terminal = nullptr;
  s.file = nullptr;
  s.update_levels();
}

bool enabled(Level level) { return state().all->should_log(native(level)); }

void write(Level level, std::string_view message) noexcept {
  try {
    state().all->log(native(level), spdlog::string_view_t(message.data(), message.size()));
  } catch (...) {
  }
}

void write_local(Level level, std::string_view message) noexcept {
  try {
    state().local->log(native(level), spdlog::string_view_t(message.data(), message.size()));
  } catch (...) {
  }
}

}  // namespace expr::log
