// Runs a job in a forked worker process, so that a crash, a hang or a CUDA error in a plugin
// becomes that job's result instead of the end of the series. The parent never touches CUDA:
// whatever needs the device happens in the child.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace expr::runner {

// The child's line to its parent: one JSON message per line.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  void send(const nlohmann::json& message);

 private:
  int fd_;
};

struct WorkerExit {
  enum class How { finished, crashed, timed_out } how = How::finished;
  int exit_code = 0;
  int signal = 0;
  std::optional<nlohmann::json> result;  // the last message of type "result"
  std::string describe() const;          // "was killed by SIGSEGV (Segmentation fault)", "exited with status 3 ..."
};

struct WorkerOptions {
  double timeout_seconds = 0;           // 0: none
  std::filesystem::path log_file;       // the child's stdout and stderr
  std::function<void(const nlohmann::json&)> on_message;  // every message but the result, as it arrives
  std::optional<std::uint64_t> memory_limit;  // bytes of host memory (runner/limits.hpp); none: no limit
};

WorkerExit run_in_worker(const std::function<void(Channel&)>& job, const WorkerOptions& options);

// The last lines of a log file, for a failure reason.
std::string tail(const std::filesystem::path& file, std::size_t lines);

}  // namespace expr::runner
