// The parent's side of a run: placing experiments, starting their workers, collecting results.
#include "runner/series_runner.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>

#include "cupti/collector.hpp"
#include "device/cuda.hpp"
#include "outcome/measurement_json.hpp"
#include "runner/cold_trace.hpp"
#include "runner/context_keeper.hpp"
#include "runner/context.hpp"
#include "runner/launcher.hpp"
#include "runner/limits.hpp"
#include "runner/schedule.hpp"
#include "runner/worker.hpp"
#include "util/log.hpp"
#include "util/regex.hpp"
#include "util/units.hpp"

namespace expr::runner {

namespace fs = std::filesystem;

struct PendingProbe::State {
  WorkerPool pool;
  fs::path log = fs::temp_directory_path() / fmt::format("expr-probe-{}.log", ::getpid());
  std::optional<WorkerExit> exit;
  std::optional<DeviceProbe> probe;
};

PendingProbe::PendingProbe() : state_(std::make_unique<State>()) {
  state_->pool.start(
      [](Channel& channel) {
        const auto a = cuda::probe();
        nlohmann::json j{{"type", "result"}, {"devices", a.devices}, {"unavailable", a.reason}};
        // The run's environment block names the first device; each experiment records its own.
        std::map<std::string, std::string> environment;
        if (a.devices > 0) {
          environment = cuda::environment(0);
          environment["cupti_api"] = cupti::api_version();
        }
        j["environment"] = environment;
        channel.send(j);
      },
      {.name = "CUDA probe", .timeout_seconds = 30, .log_file = state_->log, .on_exit = [state = state_.get()](WorkerExit e) {
         state->exit = std::move(e);
       }});
}

PendingProbe::~PendingProbe() {
  std::error_code ec;
  fs::remove(state_->log, ec);
}

const DeviceProbe& PendingProbe::result() {
  if (state_->probe) return *state_->probe;
  while (!state_->exit && state_->pool.running() > 0) state_->pool.wait();
  DeviceProbe probe;
  if (state_->exit && state_->exit->result) {
    probe.devices = state_->exit->result->at("devices");
    probe.unavailable = state_->exit->result->at("unavailable");
    probe.environment = state_->exit->result->at("environment").get<std::map<std::string, std::string>>();
  } else {
    probe.unavailable = "the CUDA probe " + (state_->exit ? state_->exit->describe() : std::string("ended without a word"));
  }
  return state_->probe.emplace(std::move(probe));
}

namespace {

bool supports(const series::ExperimentPlan& e, Device d) {
  const auto& devices = e.plugin->description().devices;
  return std::find(devices.begin(), devices.end(), d) != devices.end();
}

// The kind of device an experiment runs on, or the reason it cannot run.
std::variant<Device, std::string> choose_device(const series::ExperimentPlan& e, const DeviceProbe& probe,
                                                const std::optional<Device>& forced) {
  const bool has_cuda = probe.devices > 0;
  const auto choice = forced ? (*forced == Device::cuda ? series::DeviceChoice::cuda : series::DeviceChoice::cpu) : e.device;
  switch (choice) {
    case series::DeviceChoice::cuda:
      if (!supports(e, Device::cuda)) return fmt::format("plugin {} does not run on cuda", e.plugin->description().name);
      if (!has_cuda) return fmt::format("needs cuda: {}", probe.unavailable);
      return Device::cuda;
    case series::DeviceChoice::cpu:
      if (!supports(e, Device::cpu)) return fmt::format("plugin {} does not run on the cpu", e.plugin->description().name);
      return Device::cpu;
    case series::DeviceChoice::auto_:
      if (has_cuda && supports(e, Device::cuda)) return Device::cuda;
      if (supports(e, Device::cpu)) return Device::cpu;
      return fmt::format("plugin {} runs only on cuda: {}", e.plugin->description().name, probe.unavailable);
  }
  return std::string("no device");
}

outcome::Measurement skipped(const series::ExperimentPlan& e, std::string reason) {
  outcome::Measurement m;
  m.experiment = e.name;
  m.plugin = e.plugin->description().name;
  m.params = e.params.values();
  m.iterations = e.iterations;
  m.status = outcome::Status::skipped;
  m.reason = std::move(reason);
  return m;
}

// In a worker, before its timed phases: the parent answers "go" once the worker it started ahead
// for the next job (SeriesRun::start_ahead) has made its CUDA context, so that nothing but this
// worker's own calls runs while it is timed.
void wait_until_quiet(Channel& channel) {
  channel.send({{"type", "quiet"}});
  read_from_parent();
}

// The worker's job: one experiment, its events sent up the channel as they happen.
void experiment_job(Channel& channel, const series::ExperimentPlan& e, const Placement& placement, const ExperimentFiles& files,
                    const fs::path& shared) {
  ExperimentEvents events{
      [&](std::string_view phase, std::string_view detail) {
        channel.send({{"type", "progress"}, {"phase", phase}, {"detail", detail}});
      },
      // The plugin's ctx.log lines: the worker's log, and the parent's under the experiment's name.
      [](LogLevel level, std::string_view message) { log::write(log_level(level), message); },
      [&] { wait_until_quiet(channel); }};
  auto j = outcome::to_json(run_experiment(e, placement, shared, files.trace, events));
  j["type"] = "result";
  channel.send(j);
}

// A later timing round's worker: its measurement sent up as the result.
void timing_round_job(Channel& channel, const series::ExperimentPlan& e, const Placement& placement, const fs::path& shared) {
  ExperimentEvents events{[&](std::string_view phase, std::string_view detail) {
                            channel.send({{"type", "progress"}, {"phase", phase}, {"detail", detail}});
                          },
                          // The measuring worker passed the plugin's messages on already.
                          [](LogLevel level, std::string_view message) { log::write_local(log_level(level), message); },
                          [&] { wait_until_quiet(channel); }};
  auto j = outcome::to_json(time_round(e, placement, shared, events));
  j["type"] = "result";
  channel.send(j);
}

// The kinds of worker an experiment has: the one that measures it, the one that traces its cold
// call, and each later timing round.
enum class WorkerKind { measure, cold_trace, timing_round };

// A worker's job as the launcher can make it again from what it was forked with: which
// experiment, which of its workers, the GPU it is pinned to (-1: none), where its files go.
nlohmann::json describe(std::size_t experiment, WorkerKind kind, int pinned, const ExperimentFiles& files) {
  return {{"experiment", experiment},
          {"kind", static_cast<int>(kind)},
          {"pinned", pinned},
          {"files", {files.trace.string(), files.log.string(), files.cold_trace.string(), files.cold_log.string()}}};
}

// A worker started ahead of its job, for a CUDA job: it makes its context while the worker before
// it still runs (a context takes about 170 ms on the H200, in every worker).
nlohmann::json describe_ahead(int pinned) { return {{"ahead", true}, {"pinned", pinned}}; }

std::function<void(Channel&)> job_for(const series::Plan& plan, const std::vector<Device>& devices, const fs::path& shared,
                                      const nlohmann::json& description);

// Ahead of its job: the context, then "ready", then the job's description from the parent.
void ahead_job(Channel& channel, const series::Plan& plan, const std::vector<Device>& devices, const fs::path& shared, int pinned) {
  if (pinned >= 0) pin_to_gpu(pinned);
  cuda::select(0);
  channel.send({{"type", "ready"}});
  const auto job = read_from_parent();
  if (job.empty()) return;  // the run was stopped first
  job_for(plan, devices, shared, nlohmann::json::parse(job))(channel);
}

// The job a description stands for, in the parent or in the launcher, from the run's plan, each
// experiment's device and the run's shared directory (Context::shared_directory).
std::function<void(Channel&)> job_for(const series::Plan& plan, const std::vector<Device>& devices, const fs::path& shared,
                                      const nlohmann::json& description) {
  if (description.contains("ahead")) {
    return [&plan, &devices, shared, pinned = description.at("pinned").get<int>()](Channel& channel) {
      ahead_job(channel, plan, devices, shared, pinned);
    };
  }
  const auto i = description.at("experiment").get<std::size_t>();
  const auto& e = plan.experiments.at(i);
  const Placement in_worker{devices.at(i), 0};  // as the worker sees it: a pinned GPU is its device 0
  const auto kind = static_cast<WorkerKind>(description.at("kind").get<int>());
  const int pinned = description.at("pinned").get<int>();
  const auto& paths = description.at("files");
  const ExperimentFiles files{paths.at(0).get<std::string>(), paths.at(1).get<std::string>(), paths.at(2).get<std::string>(),
                              paths.at(3).get<std::string>()};
  return [&e, in_worker, kind, pinned, files, shared](Channel& channel) {
    if (pinned >= 0) pin_to_gpu(pinned);
    switch (kind) {
      case WorkerKind::measure: return experiment_job(channel, e, in_worker, files, shared);
      case WorkerKind::cold_trace: return cold_trace_job(channel, e, in_worker, files, shared);
      case WorkerKind::timing_round: return timing_round_job(channel, e, in_worker, shared);
    }
  };
}

// A timing round as the parent knows it once its worker is gone.
outcome::Measurement conclude_round(const series::ExperimentPlan& e, const WorkerExit& exit, const std::string& last_phase,
                                    const std::string& error, const fs::path& log) {
  if (exit.result) return outcome::measurement_from_json(*exit.result);
  auto m = skipped(e, fmt::format("its worker {} during {}{}", exit.describe(), last_phase, error.empty() ? "" : ": " + error));
  m.status = status_without_result(exit);
  if (const auto log_tail = tail(log, 3); !log_tail.empty()) m.reason += "; its log ends with:\n" + log_tail;
  return m;
}

// What the parent knows of an experiment once its worker is gone: the worker's own result, or why
// there is none.
// `interrupts`: how many interrupts the run had acted on when the worker ended.
outcome::Measurement conclude(const series::ExperimentPlan& e, const Placement& placement, const ExperimentFiles& files,
                              const WorkerExit& exit, const std::string& last_phase, const std::string& error, int interrupts) {
  outcome::Measurement m;
  if (exit.result) {
    m = outcome::measurement_from_json(*exit.result);
  } else {
    m = skipped(e, "");
    m.device = placement.device;
    if (exit.how == WorkerExit::How::timed_out) {
      m.status = outcome::Status::timed_out;
      m.reason = fmt::format("no result after the {} s timeout (last phase: {})", e.timeout, last_phase);
    } else if (exit.how == WorkerExit::How::stopped) {
      m.status = outcome::Status::interrupted;
      m.reason = interrupts >= 2 ? fmt::format("killed during {}: the run was interrupted a second time", last_phase)
                                 : fmt::format("killed during {} when the run was interrupted: it did not stop within {} s", last_phase,
                                               stop_grace.count());
    } else {
      m.status = outcome::Status::crashed;
      m.reason = fmt::format("the worker {} during {}{}", exit.describe(), last_phase, error.empty() ? "" : ": " + error);
      // Memory asked for outside operator new (malloc whose null goes unchecked, a thread's stack)
      // runs into the limit as a crash, not as the announced failure.
      if (e.memory && exit.signal != 0)
        m.reason += fmt::format(" (it ran under a memory limit of {}: memory that a plugin or its libraries ask for through malloc "
                                "or for a thread's stack ends this way when the limit refuses it)",
                                util::format_bytes(static_cast<double>(*e.memory)));
    }
    if (const auto log_tail = tail(files.log, 5); !log_tail.empty()) m.reason += "; worker.log ends with:\n" + log_tail;
  }
  if (fs::exists(files.trace)) m.trace = outcome::TraceSource(files.trace);
  add_worker_marks(m, exit);
  return m;
}

// One experiment in flight, and what its workers need to know of it.
struct Running {
  std::size_t index = 0;  // in the plan
  const series::ExperimentPlan* plan = nullptr;
  Placement placement;  // as the run names it (the GPU as expr was given it)
  Placement in_worker;  // as the worker sees it
  int pinned = -1;      // the GPU the worker is pinned to with --gpus; -1: none
  std::size_t slot = 0;
  int worker = -1;  // its worker now, in the pool
  ExperimentFiles files;
  std::string last_phase = "start";
  std::string error;
  bool memory_exhausted = false;
  bool holds_slot = true;  // false once its later rounds wait for their turn (SeriesRun::next_round)
  double worker_seconds = 0;  // the experiment's wall time in its workers so far, as the parent saw it
  std::vector<outcome::Measurement> later_rounds;  // the timing rounds after the first, as they end
};

// The parent's side of a run as named steps: each experiment's measuring worker, then (where a
// guess reads cold.*) the cold call traced in a fresh worker, then its later timing rounds, each a
// fresh worker too; the experiment is finished when the last ends. With one slot the later rounds
// are spread over the run: round r of an experiment waits until `spacing_` more experiments have
// been measured, so that the rounds of one point see the machine at different times, as the runs
// a comparison sets side by side do (rounds taken back to back share the machine's state of the
// moment and understate how far a figure moves between runs). At most spacing_ times the rounds
// experiments are measured and not finished at once. With several slots (--gpus) an
// experiment's rounds follow each other in its slot, on its GPU.
class SeriesRun {
 public:
  SeriesRun(const series::Plan& plan, const std::vector<Device>& devices, const fs::path& shared, const RunOptions& options, RunObserver& observer,
            std::size_t slots, std::vector<Job> jobs, int most_rounds, Launcher& launcher)
      : plan_(plan), devices_(devices), shared_(shared), options_(options), observer_(observer), staggered_(slots == 1),
        spacing_(std::clamp<std::size_t>((jobs.size() + static_cast<std::size_t>(most_rounds) - 1) / static_cast<std::size_t>(most_rounds), 1, 16)),
        schedule_(slots, std::move(jobs)) {
    pool_.launch_through(&launcher);
  }

  void run() {
    while (schedule_.waiting() || busy() > 0 || !waiting_.empty()) {
      if (options_.interrupts) act_on_interrupts();
      // With one slot, one worker at a time, and a round whose turn has come before the next experiment.
      const bool slot_free = !staggered_ || busy() == 0;
      if (slot_free && !(staggered_ && take_due_round()))
        while (const auto start = schedule_.next()) measure(start->job.experiment, start->slot);
      pool_.wait(options_.interrupts ? options_.interrupts->wake_fd() : -1);
    }
  }

 private:
  void act_on_interrupts() {
    options_.interrupts->drain();
    const int now = std::min(options_.interrupts->count(), 2);
    if (now > interrupts_seen_) {
      if (now == 1) pool_.stop_all(stop_grace);
      else pool_.kill_all();
      interrupts_seen_ = now;
    }
    if (interrupts_seen_ == 0) return;
    for (const auto& job : schedule_.take_waiting()) {
      auto m = skipped(plan_.experiments[job.experiment], "not started: the run was interrupted");
      m.status = outcome::Status::interrupted;
      observer_.finished(std::move(m));
    }
    // Measured experiments keep what their rounds so far took.
    for (auto& w : std::exchange(waiting_, {})) {
      w.measured.reason += fmt::format("{}timing rounds {} to {} not taken: the run was interrupted", w.measured.reason.empty() ? "" : "; ",
                                       w.round, w.state->plan->iterations.rounds);
      finish(*w.state, std::move(w.measured));
    }
  }

  void measure(std::size_t index, std::size_t slot) {
    const auto& e = plan_.experiments[index];
    const auto device = devices_[index];
    // With --gpus, a CUDA experiment's worker sees only its slot's GPU, as its device 0; the run
    // names that GPU as it was given.
    const int pinned = device == Device::cuda && !options_.gpus.empty() ? options_.gpus[slot] : -1;
    auto& state = running_[e.name];
    state = Running{};
    state.index = index;
    state.plan = &e;
    state.placement = {device, std::max(pinned, 0)};
    state.in_worker = {device, 0};
    state.pinned = pinned;
    state.slot = slot;
    state.files = options_.files(e.name);
    observer_.started(e, state.placement);
    start_worker(state, WorkerKind::measure, "", state.files.log, [this, &state](WorkerExit exit) { measured(state, exit); });
  }

  void measured(Running& state, const WorkerExit& exit) {
    ++measured_count_;
    const auto& e = *state.plan;
    auto m = conclude(e, state.in_worker, state.files, exit, state.last_phase, state.error, interrupts_seen_);
    record_gpu(state, m);
    // Running out of memory shows as whatever the plugin made of it; the limit is the reason.
    if (state.memory_exhausted && m.status != outcome::Status::ok) m.reason = fmt::format("{} ({})", memory_limit_exceeded(*e.memory), m.reason);
    if (m.status != outcome::Status::ok || interrupts_seen_ > 0) {
      if (m.status == outcome::Status::ok && e.trace_cold_call) {
        auto cold = skipped(e, "not traced: the run was interrupted");
        cold.status = outcome::Status::interrupted;
        m.cold = std::make_shared<const outcome::Measurement>(std::move(cold));
      }
      finish(state, std::move(m));
    } else if (e.trace_cold_call) {
      trace_cold(state, std::move(m));
    } else {
      next_round(state, std::move(m), 2);
    }
  }

  void trace_cold(Running& state, outcome::Measurement measured) {
    start_worker(state, WorkerKind::cold_trace, " (cold trace)", state.files.cold_log,
                 [this, &state, measured = std::move(measured)](WorkerExit exit) mutable {
                   auto cold = conclude_cold_trace(*state.plan, state.in_worker, state.files, exit, state.error);
                   record_gpu(state, cold);
                   measured.cold = std::make_shared<const outcome::Measurement>(std::move(cold));
                   next_round(state, std::move(measured), 2);
                 });
  }

  // Timing round `number` and those after it (outcome::Iterations::rounds), each in a fresh worker:
  // at once in the experiment's slot, or, with one slot, once its turn comes (take_due_round).
  void next_round(Running& state, outcome::Measurement measured, int number) {
    if (number > state.plan->iterations.rounds || interrupts_seen_ > 0) return finish(state, std::move(measured));
    if (!staggered_) return take_round(state, std::move(measured), number);
    if (state.holds_slot) {
      schedule_.done(state.slot);  // the next experiment is measured meanwhile
      state.holds_slot = false;
    }
    waiting_.push_back({&state, std::move(measured), number, measured_count_ + spacing_});
  }

  // Starts the first waiting round whose turn has come, if any: every round is due once no
  // experiment is left to measure.
  bool take_due_round() {
    const auto due = std::find_if(waiting_.begin(), waiting_.end(), [&](const Waiting& w) { return measured_count_ >= w.due || !schedule_.waiting(); });
    if (due == waiting_.end()) return false;
    auto w = std::move(*due);
    waiting_.erase(due);
    take_round(*w.state, std::move(w.measured), w.round);
    return true;
  }

  void take_round(Running& state, outcome::Measurement measured, int number) {
    const auto log = state.files.round_log(number);
    start_worker(state, WorkerKind::timing_round, fmt::format(" (timing round {})", number), log,
                 [this, &state, number, log, measured = std::move(measured)](WorkerExit exit) mutable {
                   state.later_rounds.push_back(conclude_round(*state.plan, exit, state.last_phase, state.error, log));
                   next_round(state, std::move(measured), number + 1);
                 });
  }

  void finish(Running& state, outcome::Measurement measured) {
    auto m = with_timing_rounds(std::move(measured), state.later_rounds);
    m.wall_seconds = state.worker_seconds;
    if (state.holds_slot) schedule_.done(state.slot);
    running_.erase(state.plan->name);
    observer_.finished(std::move(m));
  }

  // Which GPU the experiment ran on goes with the GPU's own facts.
  static void record_gpu(const Running& state, outcome::Measurement& m) {
    if (state.placement.device == Device::cuda) m.environment["gpu_index"] = std::to_string(state.placement.index);
  }

  // Workers that run a job, not those waiting ahead of one.
  std::size_t busy() const { return pool_.running() - ahead_.size(); }

  // The worker for the slot's next CUDA job is started ahead, once the running one is past what it
  // measures before its timed phases (the cold first call): it makes its CUDA context meanwhile,
  // and the running worker waits at its quiet point until that is done (wait_until_quiet). A CPU
  // worker has no context to make, and starts when its job comes.
  void start_ahead(const Running& state, bool more_to_come) {
    if (ahead_.count(state.slot) || !more_to_come || devices_[state.index] != Device::cuda) return;
    const auto slot = state.slot;
    const auto worker = std::make_shared<int>(-1);
    WorkerOptions options{"a worker started ahead", ahead_timeout, {}};
    // (A worker ahead that was let go and killed may still say "ready": it is no longer the slot's.)
    options.on_message = [this, slot, worker](const nlohmann::json& message) {
      const auto it = ahead_.find(slot);
      if (message.value("type", "") != "ready" || it == ahead_.end() || it->second.worker != *worker) return;
      // Its context is made: from here it only waits, however long the job before it takes.
      pool_.restart_timeout(*worker, 0);
      it->second.ready = true;
      release(slot);
    };
    options.on_exit = [this, slot, worker](const WorkerExit&) {  // one that ended before its job came
      if (const auto it = ahead_.find(slot); it != ahead_.end() && it->second.worker == *worker) {
        ahead_.erase(it);
        release(slot);
      }
    };
    const auto description = describe_ahead(state.pinned);
    options.description = description;
    *worker = pool_.start(job_for(plan_, devices_, shared_, description), std::move(options));
    ahead_[slot] = {*worker, state.pinned};
  }

  // The worker held at its quiet point in `slot` goes on.
  void release(std::size_t slot) {
    if (const auto it = held_.find(slot); it != held_.end()) {
      pool_.tell(it->second, "go");
      held_.erase(it);
    }
  }

  // A worker's quiet point: it goes on at once, unless the worker ahead of it is still starting.
  void quiet(const Running& state) {
    if (const auto it = ahead_.find(state.slot); it != ahead_.end() && !it->second.ready) held_[state.slot] = state.worker;
    else pool_.tell(state.worker, "go");
  }

  void start_worker(Running& state, WorkerKind kind, const std::string& suffix, const fs::path& log, std::function<void(WorkerExit)> on_exit) {
    state.error.clear();
    const auto& e = *state.plan;
    // Whatever may follow this worker in its slot: its own later steps, or other experiments.
    const bool more_to_come = schedule_.waiting() || !waiting_.empty() ||
                              (kind == WorkerKind::measure && (e.trace_cold_call || e.iterations.rounds > 1)) ||
                              (kind == WorkerKind::timing_round && state.later_rounds.size() + 2 < static_cast<std::size_t>(e.iterations.rounds));
    // Progress and logs of the experiment's workers, as they arrive.
    const auto listen = [this, &state, kind, more_to_come](const nlohmann::json& message) {
      const auto type = message.value("type", "");
      if (type == "progress") {
        state.last_phase = message.value("phase", "");
        observer_.progress(state.plan->name, state.last_phase, message.value("detail", ""));
        // Past the cold first call: the measuring worker's verify, a later round's untimed first call.
        if ((kind == WorkerKind::measure && state.last_phase == "verify") || (kind == WorkerKind::timing_round && state.last_phase == "first call"))
          start_ahead(state, more_to_come);
      } else if (type == "quiet") {
        quiet(state);
      } else if (type == "error") {
        state.error = message.value("message", "");
      } else if (is_memory_exhausted(message)) {
        state.memory_exhausted = true;
      }
    };
    const auto description = describe(state.index, kind, state.pinned, state.files);
    WorkerOptions options{e.name + suffix, e.timeout, log, listen,
                          [this, &state, on_exit = std::move(on_exit)](WorkerExit exit) {
                            if (const auto it = held_.find(state.slot); it != held_.end() && it->second == state.worker) held_.erase(it);
                            state.worker_seconds += static_cast<double>(exit.ended - exit.spawned) * 1e-9;
                            on_exit(std::move(exit));
                          },
                          e.memory, description};
    // The worker started ahead in this slot takes the job, if it is a CUDA job on its GPU; a memory
    // limit is set as a worker starts, so a job with one gets a fresh worker.
    if (const auto it = ahead_.find(state.slot); it != ahead_.end()) {
      const auto ahead = it->second;
      ahead_.erase(it);
      if (devices_[state.index] == Device::cuda && ahead.pinned == state.pinned && !e.memory) {
        state.worker = ahead.worker;
        pool_.reassign(ahead.worker, std::move(options));
        pool_.tell(ahead.worker, description.dump());
        return;
      }
      pool_.kill(ahead.worker);
    }
    state.worker = pool_.start(job_for(plan_, devices_, shared_, description), std::move(options));
  }

  // A worker started ahead of its slot's next CUDA job (start_ahead).
  struct Ahead {
    int worker = -1;
    int pinned = -1;
    bool ready = false;  // it said so: its context is made
  };
  // Long enough for any CUDA context; a worker that takes longer is given up, and the one held at
  // its quiet point goes on.
  static constexpr double ahead_timeout = 120;

  // An experiment measured, waiting for its next timing round's turn.
  struct Waiting {
    Running* state;
    outcome::Measurement measured;
    int round;        // the round to take next
    std::size_t due;  // its turn: once this many experiments have been measured
  };

  const series::Plan& plan_;
  const std::vector<Device>& devices_;
  const fs::path& shared_;
  const RunOptions& options_;
  RunObserver& observer_;
  bool staggered_;          // one slot: later rounds spread over the run
  std::size_t spacing_;     // experiments measured between two rounds of one experiment
  std::size_t measured_count_ = 0;  // measuring workers ended so far
  std::vector<Waiting> waiting_;
  Schedule schedule_;
  WorkerPool pool_;
  std::map<std::string, Running> running_;
  std::map<std::size_t, Ahead> ahead_;  // by slot
  std::map<std::size_t, int> held_;     // by slot: the worker waiting at its quiet point for the slot's worker ahead
  int interrupts_seen_ = 0;  // acted on so far: the first stops the workers, the second kills them
};

// The run's shared directory (Context::shared_directory): made in the temporary directory as the
// run starts, removed with all it holds as the run ends.
class SharedDirectory {
 public:
  SharedDirectory() {
    auto name = (fs::temp_directory_path() / "expr-shared-XXXXXX").string();
    if (::mkdtemp(name.data()))
      path_ = name;
    else
      log::warn("no directory for the run's experiments to share ({}): each computes what it would have shared", std::strerror(errno));
  }
  ~SharedDirectory() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  SharedDirectory(const SharedDirectory&) = delete;
  SharedDirectory& operator=(const SharedDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

void run_series(const series::Plan& plan, const DeviceProbe& probe, const RunOptions& options, RunObserver& observer) {
  std::optional<util::Regex> filter;
  if (options.filter) filter.emplace(*options.filter);
  // What runs, on which kind of device; the rest is skipped at once, with the reason.
  std::vector<Job> jobs;
  std::vector<Device> devices(plan.experiments.size(), Device::cpu);
  for (std::size_t i = 0; i < plan.experiments.size(); ++i) {
    const auto& e = plan.experiments[i];
    if (filter && !filter->search(e.name)) {
      observer.finished(skipped(e, "filtered out by --filter"));
      continue;
    }
    const auto device = choose_device(e, probe, options.device);
    if (const auto* why = std::get_if<std::string>(&device)) {
      observer.finished(skipped(e, *why));
      continue;
    }
    devices[i] = std::get<Device>(device);
    jobs.push_back({i, options.expected_seconds.empty() ? 0.0 : options.expected_seconds.at(i)});
  }
  // One slot per GPU in use; serially, one slot, CUDA experiments on device 0 as the series asks.
  const std::size_t slots = options.gpus.empty() ? std::max<std::size_t>(options.workers, 1) : options.gpus.size();
  int most_rounds = 1;
  for (const auto& e : plan.experiments) most_rounds = std::max(most_rounds, e.iterations.rounds);
  // A context held on each GPU in use while the run lasts, so that its workers create theirs sooner.
  std::vector<std::unique_ptr<ContextKeeper>> keepers;
  if (std::any_of(jobs.begin(), jobs.end(), [&](const Job& job) { return devices[job.experiment] == Device::cuda; })) {
    if (options.gpus.empty()) keepers.push_back(std::make_unique<ContextKeeper>(-1));
    for (const int gpu : options.gpus) keepers.push_back(std::make_unique<ContextKeeper>(gpu));
  }
  const SharedDirectory shared;
  // Workers forked from a process as small as this one is now, whatever the run holds by its end.
  Launcher launcher([&plan, &devices, &shared](const nlohmann::json& description) { return job_for(plan, devices, shared.path(), description); });
  SeriesRun(plan, devices, shared.path(), options, observer, slots, std::move(jobs), most_rounds, launcher).run();
}

}  // namespace expr::runner
