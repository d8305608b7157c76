// Worker processes: each job runs in a forked child, so that a crash, a hang or a CUDA error in a
// plugin becomes that job's result instead of the end of the series. The parent never touches
// CUDA: whatever needs the device happens in a child. A WorkerPool watches several children at
// once (one poll over their pipes, each child's timeout enforced), so the parent can keep one
// worker per device busy; run_in_worker is the one-job case.
//
// A worker never outlives the parent: it asks the kernel for SIGHUP when the parent dies
// (PR_SET_PDEATHSIG) and then kills its whole process group, so whatever the plugin started ends
// too. When the parent stops a run (runner/interrupt.hpp), a worker hears SIGTERM:
// stop_requested() turns true, and the experiment stops at its next iteration with what it
// measured so far; one that does not stop is killed.
#pragma once

#include <signal.h>
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

#include "trace/trace.hpp"

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

// A worker's ends of its three pipes with the parent: its messages up (Channel), its stdout and
// stderr up, and the parent's lines down (read_from_parent).
struct WorkerEnds {
  int messages = -1, output = -1, commands = -1;
};

struct WorkerExit {
  // stopped: the parent stopped it (stop_all, kill_all) and it ended without a result.
  enum class How { finished, crashed, timed_out, stopped } how = How::finished;
  int exit_code = 0;
  int signal = 0;
  std::optional<nlohmann::json> result;  // the last message of type "result"
  // CLOCK_MONOTONIC (trace/clock.hpp): just before fork; once the parent was done with the worker
  // (WorkerOptions::on_exit).
  trace::Ns spawned = 0, ended = 0;
  std::string describe() const;          // "was killed by SIGSEGV (Segmentation fault)", "exited with status 3 ..."
};

// The most of a worker's stdout and stderr its log file keeps: the rest is dropped, and a last line
// says how much was. A plugin that prints without end must not fill the disk that the run's
// results are written to.
constexpr std::uint64_t max_worker_output = std::uint64_t{16} << 20;

struct WorkerOptions {
  std::string name;                // what the parent's log calls the worker: its log lines come as "NAME: line"
  double timeout_seconds = 0;      // 0: none
  std::filesystem::path log_file;  // the child's stdout and stderr, and its own log (util/log.hpp), up to max_worker_output
  std::function<void(const nlohmann::json&)> on_message{};  // every message but the result and log lines, as it arrives
  // Once the worker has ended: reaped, or, for a worker that sent its result and closed its end of
  // the pipe, as soon as it did. Such a process may still be tearing down (a CUDA context takes
  // about 130 ms on the H200); it is reaped later, so the next worker's start overlaps it.
  std::function<void(WorkerExit)> on_exit{};
  std::optional<std::uint64_t> memory_limit{};              // bytes of host memory (runner/limits.hpp); none: no limit
  // The job as the pool's launcher knows it (runner/launcher.hpp); null: the job is forked from
  // this process.
  nlohmann::json description{};
};

class Launcher;

class WorkerPool {
 public:
  WorkerPool() = default;
  ~WorkerPool();  // kills and reaps whatever still runs
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Workers whose options describe their job are forked by `launcher` while it runs.
  void launch_through(Launcher* launcher) { launcher_ = launcher; }
  // Starts a child that runs `job` and exits: forked here, or by the launcher from the job's
  // description. Returns the worker's id in this pool. Throws std::runtime_error when no process
  // can be made.
  int start(const std::function<void(Channel&)>& job, WorkerOptions options);
  // Sends the worker one line (read_from_parent); a worker that has ended does not hear it.
  void tell(int worker, std::string_view line);
  // The worker takes on a new job (one started ahead, before its job was known: series_runner):
  // its options are replaced and its clock (spawned, the timeout) starts again now.
  void reassign(int worker, WorkerOptions options);
  // The worker's timeout counts `seconds` from now (0: none).
  void restart_timeout(int worker, double seconds);
  // Kills one worker and what it started (SIGKILL to its process group); its end comes through wait().
  void kill(int worker);
  std::size_t running() const { return workers_.size(); }
  // Blocks until some child has said something or ended (or a timeout came due, or `wake_fd`
  // became readable), and hands that to its callbacks. Returns at once when nothing runs.
  void wait(int wake_fd = -1);
  // Asks every child to stop (SIGTERM to its process group) and kills those still running `grace`
  // later. Their ends come through wait() as usual.
  void stop_all(std::chrono::milliseconds grace);
  // Kills every child and what it started now (SIGKILL to its process group).
  void kill_all();

 private:
  struct Worker {
    pid_t pid = 0;
    trace::Ns spawned = 0;
    WorkerOptions options;
    std::chrono::steady_clock::time_point deadline;
    std::string pending;  // a message not yet complete
    std::optional<nlohmann::json> result;
    bool stopping = false;  // stop_all or kill_all reached it
    // The child's stdout and stderr come through a pipe that the parent copies into the log
    // file, so that it can stop at max_worker_output.
    int output_fd = -1;  // -1 once the child's side closed
    int commands_fd = -1;  // the write end of the parent's lines to the child
    int log_fd = -1;     // -1 when the log file could not be opened
    std::uint64_t logged = 0, dropped = 0;
  };
  bool read_from(int fd);  // false once the child closed its end
  // Copies what the child printed (up to 1 MiB a call) into its log file, up to the cap; false once
  // its side closed.
  static bool copy_output(Worker& w);
  // The rest of its output into its log and the marker of what was dropped; both closed.
  static void close_output(Worker& w);
  void finish(int fd, bool timed_out);

  // Reaps the workers that ended with their result and are gone since; all of them when `block`.
  void reap_exiting(bool block);

  std::map<int, Worker> workers_;  // by the read end of the child's pipe
  std::vector<pid_t> exiting_;     // ended with their result, not reaped yet
  Launcher* launcher_ = nullptr;
};

// Blocks SIGINT and SIGTERM before a fork, so that the parent's handlers never run in the child
// before it has its own; returns the mask to restore (in the parent after the fork, in a worker by
// run_worker).
sigset_t block_stop_signals();

// Kills a helper process of this one (the launcher, a context keeper) and reaps it.
void kill_and_reap(pid_t pid);

// The start of every worker process, whoever forked it (WorkerPool, Launcher), with SIGINT and
// SIGTERM still blocked (block_stop_signals): its own process group, its signal handlers, its death with `parent`, its
// memory limit; then `job` with signal mask `mask`, its messages, stdout and stderr to `ends`, and
// the parent's lines from there. Never returns.
[[noreturn]] void run_worker(pid_t parent, const sigset_t& mask, const WorkerEnds& ends, const std::optional<std::uint64_t>& memory_limit,
                             const std::function<void(Channel&)>& job);

// In a worker: whether the parent asked it to stop (SIGTERM).
bool stop_requested();

// In a worker: the parent's next line (WorkerPool::tell), without its newline; blocks until it
// comes. Empty when the parent asked the worker to stop meanwhile (stop_requested()). Throws
// std::runtime_error when the parent closed its end.
std::string read_from_parent();

// In a worker, before anything starts CUDA: it sees only GPU `gpu`, as its device 0, so that a
// plugin cannot touch a neighbour's GPU. When expr itself was given CUDA_VISIBLE_DEVICES (a Slurm
// task's GPUs), `gpu` counts within that list.
void pin_to_gpu(int gpu);

// Runs one job in a worker and waits for it.
WorkerExit run_in_worker(const std::function<void(Channel&)>& job, WorkerOptions options);

// The last lines of a log file, for a failure reason.
std::string tail(const std::filesystem::path& file, std::size_t lines);

}  // namespace expr::runner
