// The process that forks a run's workers. A fork copies the forking process's page tables, and a
// worker then pays for every page of it that either side touches: forked from the parent, a worker
// cost more with every experiment the run had finished (the parent keeps their results), so a
// 10,000-point sweep spent half again as long a point at its end as at its start. The launcher is
// forked when the run starts, before the parent grows, and forks every worker from that size.
//
// The launcher knows the run's jobs as they were when it was forked (the plan, the options), so a
// worker is asked for by a description that the launcher turns back into the job (Jobs). Each
// worker is forked by a short-lived child of the launcher that exits at once, and so becomes the
// parent's child (the parent is the subreaper of its descendants while the launcher lives): the
// parent waits for it, signals its process group and reads its exit status as for a worker it
// forked itself, and a worker still dies with the parent (runner/worker.hpp).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "runner/worker.hpp"

namespace expr::runner {

class Launcher {
 public:
  // In the launcher: the job that a description stands for.
  using Jobs = std::function<std::function<void(Channel&)>(const nlohmann::json& description)>;

  // Forks the launcher; without one (fork failed) running() is false and workers are forked by
  // the parent as before.
  explicit Launcher(Jobs jobs);
  ~Launcher();  // ends the launcher, and the parent's role as subreaper
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // A worker running the job `description` with its pipe ends `ends` (the launcher and its child
  // close theirs once the worker has its copies), with `memory_limit`. Returns its pid, a child of
  // this process, in its own process group already. Throws std::runtime_error when no worker could
  // be made; once the launcher is gone, running() turns false.
  pid_t spawn(const nlohmann::json& description, const WorkerEnds& ends, const std::optional<std::uint64_t>& memory_limit);

 private:
  void end();  // kills and reaps the launcher, closes its socket, restores the subreaper setting

  pid_t pid_ = -1;
  int socket_ = -1;  // the parent's end
  int was_subreaper_ = 0;
};

}  // namespace expr::runner
