// Worker processes: each job runs in a forked child, so that a crash, a hang or a CUDA error in a
// plugin becomes that job's result instead of the end of the series. The parent never touches
// CUDA: whatever needs the device happens in a child. A WorkerPool watches several children at
// once (one poll over their pipes, each child's timeout enforced), so the parent can keep one
// worker per device busy; run_in_worker is the one-job case.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace expr::runner {

// The child's line to its parent: one JSON message per line. Thread-safe: a worker's log lines
// may come from a library's own thread (CUPTI's buffer callbacks).
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  void send(const nlohmann::json& message);

 private:
  int fd_;
  std::mutex mutex_;
};

struct WorkerExit {
  enum class How { finished, crashed, timed_out } how = How::finished;
  int exit_code = 0;
  int signal = 0;
  std::optional<nlohmann::json> result;  // the last message of type "result"
  std::string describe() const;          // "was killed by SIGSEGV (Segmentation fault)", "exited with status 3 ..."
};

struct WorkerOptions {
  std::string name;                // what the parent's log calls the worker: its log lines come as "NAME: line"
  double timeout_seconds = 0;      // 0: none
  std::filesystem::path log_file;  // the child's stdout and stderr, and its own log (util/log.hpp)
  std::function<void(const nlohmann::json&)> on_message;  // every message but the result and log lines, as it arrives
  std::function<void(WorkerExit)> on_exit;                // once, after the child is reaped
  std::optional<std::uint64_t> memory_limit;              // bytes of host memory (runner/limits.hpp); none: no limit
};

class WorkerPool {
 public:
  WorkerPool() = default;
  ~WorkerPool();  // kills and reaps whatever still runs
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Forks a child that runs `job` and exits. Throws std::runtime_error when no process can be made.
  void start(const std::function<void(Channel&)>& job, WorkerOptions options);
  std::size_t running() const { return workers_.size(); }
  // Blocks until some child has said something or ended (or a timeout came due), and hands that to
  // its callbacks. Returns at once when nothing runs.
  void wait();

 private:
  struct Worker {
    pid_t pid = 0;
    WorkerOptions options;
    std::chrono::steady_clock::time_point deadline;
    std::string pending;  // a message not yet complete
    std::optional<nlohmann::json> result;
  };
  bool read_from(int fd);  // false once the child closed its end
  void finish(int fd, bool timed_out);

  std::map<int, Worker> workers_;  // by the read end of the child's pipe
};

// Runs one job in a worker and waits for it.
WorkerExit run_in_worker(const std::function<void(Channel&)>& job, WorkerOptions options);

// The last lines of a log file, for a failure reason.
std::string tail(const std::filesystem::path& file, std::size_t lines);

}  // namespace expr::runner
