// `expr run`: read and check the series, then run, judge and report each experiment as it ends.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>

#include "cli/commands.hpp"
#include "cli/judge.hpp"
#include "report/chrome_trace.hpp"
#include "report/summary.hpp"
#include "runner/series_runner.hpp"
#include "util/atomic_file.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

namespace {

// Shows one progress line on a terminal (rewritten in place), or one line per phase in a log.
class Progress {
 public:
  Progress() : tty_(::isatty(STDERR_FILENO)) {}

  void experiment(const std::string& name, std::size_t index, std::size_t total) {
    prefix_ = fmt::format("[{}/{}] {}", index + 1, total, name);
    phase_.clear();
    start_ = std::chrono::steady_clock::now();
  }

  void update(std::string_view phase, std::string_view detail) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const auto line = fmt::format("{}: {}{}{} ({:.1f} s)", prefix_, phase, detail.empty() ? "" : " — ", detail, seconds);
    if (tty_) {
      fmt::print(stderr, "\r\033[K{}", line);
      std::fflush(stderr);
    } else if (phase != phase_) {
      fmt::print(stderr, "{}\n", line);
    }
    phase_ = std::string(phase);
  }

  // Prints a line above the progress line.
  void say(const std::string& line) {
    if (tty_) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "{}\n", line);
  }

  void clear() {
    if (tty_) fmt::print(stderr, "\r\033[K");
  }

 private:
  bool tty_;
  std::string prefix_, phase_;
  std::chrono::steady_clock::time_point start_;
};

class Observer final : public runner::RunObserver {
 public:
  Observer(series::Plan& plan, report::RunResult& run, Judge& judge) : plan_(plan), run_(run), judge_(judge) {}

  void started(const series::ExperimentPlan& e, std::size_t index, std::size_t total) override {
    progress_.experiment(e.name, index, total);
    progress_.update("starting", "");
  }

  void progress(std::string_view phase, std::string_view detail) override { progress_.update(phase, detail); }

  void log(std::string_view experiment, LogLevel level, std::string_view message) override {
    static constexpr const char* names[] = {"debug", "info", "warning", "error"};
    progress_.say(fmt::format("  {} [{}] {}", experiment, names[static_cast<int>(level)], message));
  }

  void finished(const runner::Measurement& m) override {
    auto measurement = m;
    if (measurement.trace) {
      const auto chrome = runner::experiment_dir(run_.run_dir, m.experiment) / "chrome_trace.json";
      report::write_chrome_trace(*measurement.trace, run_.series + " / " + m.experiment, chrome);
      measurement.chrome_file = fs::relative(chrome, run_.run_dir).string();
    }
    for (const auto& [k, v] : measurement.environment) run_.environment.try_emplace(k, v);
    auto& plan = *std::find_if(plan_.experiments.begin(), plan_.experiments.end(),
                               [&](const auto& e) { return e.name == m.experiment; });
    judge_.add(std::move(measurement), std::move(plan.expectations));  // each experiment finishes once
    report::write_reports(run_);
    const auto& e = run_.experiments.back().measurement;
    progress_.say(fmt::format("{} {}: {}{}", e.status == runner::Status::ok ? "done" : "    ", e.experiment, runner::to_string(e.status),
                              e.reason.empty() ? "" : " — " + e.reason));
  }

  void clear() { progress_.clear(); }

 private:
  series::Plan& plan_;
  report::RunResult& run_;
  Judge& judge_;
  Progress progress_;
};

fs::path default_run_dir(const std::string& series) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return fs::path("runs") / fmt::format("{}-{}", series, stamp);
}

}  // namespace

int run(const RunArgs& args) {
  auto plan = load_plan(args.series);
  if (!plan) return bad_input;
  if (args.filter) {
    try {
      std::regex check(*args.filter);
    } catch (const std::regex_error& e) {
      fmt::print(stderr, "error: --filter '{}' is not a valid regex: {}\n", *args.filter, e.what());
      return bad_input;
    }
  }

  report::RunResult run;
  run.series = plan->name;
  run.series_file = args.series.string();
  run.description = plan->description;
  run.run_dir = args.out.value_or(default_run_dir(plan->name));
  run.started = report::utc_now();
  try {
    fs::create_directories(run.run_dir / "experiments");
    std::ifstream series_text(args.series);
    util::write_atomically(run.run_dir / "series.yaml", std::string(std::istreambuf_iterator<char>(series_text), {}));
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: cannot write the run directory {}: {}\n", run.run_dir.string(), e.what());
    return cannot_write;
  }

  const auto probe = runner::probe_devices();
  run.environment = report::host_environment();
  for (const auto& [k, v] : probe.environment) run.environment[k] = v;
  if (probe.devices == 0) run.environment["cuda"] = probe.unavailable;

  runner::RunOptions options{run.run_dir, args.filter, std::nullopt};
  if (args.device) options.device = *args.device == "cuda" ? Device::cuda : Device::cpu;

  Judge judge(run);
  Observer observer(*plan, run, judge);
  try {
    runner::run_series(*plan, probe, options, observer);
    judge.finish();
    run.finished = report::utc_now();
    report::write_reports(run);
  } catch (const std::exception& e) {
    observer.clear();
    fmt::print(stderr, "error: {}\n", e.what());
    return cannot_write;
  }
  observer.clear();
  fmt::print("{}", report::terminal_report(run, ::isatty(STDOUT_FILENO)));
  fmt::print("\nresults: {}\n", (run.run_dir / "results.json").string());

  const auto t = report::tally(run);
  if (t.experiments_failed > 0) return experiment_failed;
  if (t.required_failed > 0) return required_guess_failed;
  return ok;
}

}  // namespace expr::cli
