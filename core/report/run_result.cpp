// The run's bookkeeping: finding experiments, counting verdicts, naming the run and its host.
#include "report/run_result.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <fstream>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace expr::report {

const ExperimentResult* RunResult::find(const std::string& experiment) const {
  for (const auto& e : experiments)
    if (e.measurement.experiment == experiment) return &e;
  return nullptr;
}

std::string ShardRecord::str() const { return fmt::format("{}/{}", index, count); }

Tally tally(const RunResult& run) {
  Tally t;
  const auto count = [&t](const JudgedGuess& x) {
    if (!x.judgement) {
      ++t.pending;
      return;
    }
    switch (x.judgement->verdict) {
      case expect::Verdict::confirmed: ++t.confirmed; break;
      case expect::Verdict::contradicted: ++t.contradicted; break;
      case expect::Verdict::not_evaluable: ++t.not_evaluable; break;
    }
    if (x.spec.required && x.judgement->verdict != expect::Verdict::confirmed) ++t.required_failed;
  };
  for (const auto& e : run.experiments) {
    const auto s = e.measurement.status;
    if (s == outcome::Status::failed || s == outcome::Status::crashed || s == outcome::Status::timed_out) ++t.experiments_failed;
    if (s == outcome::Status::interrupted) ++t.experiments_interrupted;
    for (const auto& x : e.guesses) count(x);
  }
  for (const auto& s : run.sweep_guesses) count(s.guess);
  return t;
}

std::map<std::string, std::string> host_environment() {
  std::map<std::string, std::string> env;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) env["host"] = name;
  utsname u{};
  if (::uname(&u) == 0) env["kernel"] = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.starts_with("model name")) {
      env["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  env["cpu_cores"] = std::to_string(std::thread::hardware_concurrency());
  env["expr"] = expr_version();
  env["expr_revision"] = expr_revision();
  return env;
}

const char* expr_version() { return EXPR_VERSION; }

std::string new_run_id() {
  std::random_device entropy;
  return fmt::format("{:%Y%m%dT%H%M%SZ}-{:06x}", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())),
                     entropy() & 0xffffff);
}

std::string utc_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

}  // namespace expr::report
