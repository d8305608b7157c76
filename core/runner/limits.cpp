// The memory limit of a worker: RLIMIT_DATA, and a new-handler that tells the parent it was hit.
#include "runner/limits.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>

#include "util/units.hpp"

namespace expr::runner {

namespace {

constexpr const char* exhausted_type = "memory_exhausted";

// Made before the limit is set: the handler runs with no memory to spare.
int announce_fd = -1;
std::string announcement;
std::atomic<bool> announced{false};

void announce_and_fail() {
  if (!announced.exchange(true)) {
    [[maybe_unused]] const auto written = ::write(announce_fd, announcement.data(), announcement.size());
  }
  throw std::bad_alloc();
}

// Ends the worker with the reason, on its line to the parent, before the job has begun.
[[noreturn]] void fail(int channel_fd, const std::string& why) {
  const auto line = nlohmann::json{{"type", "error"}, {"message", why}}.dump() + "\n";
  [[maybe_unused]] const auto written = ::write(channel_fd, line.data(), line.size());
  ::_exit(3);
}

// What RLIMIT_DATA counts already: VmData in /proc/self/status, in bytes (0 when unknown).
std::uint64_t data_in_use() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmData:")) return std::strtoull(line.c_str() + 7, nullptr, 10) * 1024;  // "VmData:   123 kB"
  return 0;
}

}  // namespace

void limit_memory(std::uint64_t bytes, int channel_fd) {
  const auto limit_text = util::format_bytes(static_cast<double>(bytes));
  rlimit limit{};
  if (::getrlimit(RLIMIT_DATA, &limit) != 0) fail(channel_fd, fmt::format("cannot read the data size limit: {}", std::strerror(errno)));
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < bytes)
    fail(channel_fd, fmt::format("the memory limit of {} is above this process's hard limit of {}", limit_text,
                                 util::format_bytes(static_cast<double>(limit.rlim_max))));
  if (const auto used = data_in_use(); used >= bytes)
    fail(channel_fd, fmt::format("the memory limit of {} is below the {} the worker uses before the plugin runs", limit_text,
                                 util::format_bytes(static_cast<double>(used))));
  announce_fd = channel_fd;
  announcement = nlohmann::json{{"type", exhausted_type}}.dump() + "\n";
  limit.rlim_cur = bytes;
  if (::setrlimit(RLIMIT_DATA, &limit) != 0)
    fail(channel_fd, fmt::format("cannot set the memory limit of {}: {}", limit_text, std::strerror(errno)));
  std::set_new_handler(announce_and_fail);
}

bool is_memory_exhausted(const nlohmann::json& message) { return message.value("type", "") == exhausted_type; }

std::string memory_limit_exceeded(std::uint64_t bytes) {
  return "exceeded its memory limit of " + util::format_bytes(static_cast<double>(bytes));
}

}  // namespace expr::runner
