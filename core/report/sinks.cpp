// The run's outputs as sinks: see sinks.hpp.
#include "report/sinks.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/occupancy.hpp"
#include "report/chrome_trace.hpp"
#include "report/html_report.hpp"
#include "report/summary.hpp"
#include "trace/trace_file.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"

namespace expr::report {

namespace {

// A file written whole from the run as it begins (so that a run stopped in its first experiment
// still shows what it planned) and at the end. In between, rewriting it after every experiment
// would cost a sweep time quadratic in its points (a rewrite grows with the run): it is rewritten
// after an experiment only when the time since the last rewrite ended is at least 20 times what
// that rewrite took, which keeps rewriting under 5% of the run however long it gets, and still
// rewrites after every experiment where writing is quick beside an experiment.
class RewrittenFile : public Sink {
 public:
  using Write = void (*)(const RunDirectory&, const RunResult&);
  RewrittenFile(RunDirectory dir, Write write) : dir_(std::move(dir)), write_(write) {}
  void begin(const RunResult& run) override { rewrite(run); }
  void finished(const RunResult& run, const ExperimentResult&) override {
    if (Clock::now() - last_end_ >= pace * last_took_) rewrite(run);
  }
  void end(const RunResult& run) override { rewrite(run); }

 protected:
  const RunDirectory& dir() const { return dir_; }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr int pace = 20;

  void rewrite(const RunResult& run) {
    const auto start = Clock::now();
    write_(dir_, run);
    last_end_ = Clock::now();
    last_took_ = last_end_ - start;
  }

  RunDirectory dir_;
  Write write_;
  Clock::time_point last_end_ = {};
  Clock::duration last_took_ = {};
};

// results.json, and the journal that holds each experiment from the moment it finishes
// (RunDirectory::journal_experiment) until results.json holds it too, at the end.
class ResultsJson final : public RewrittenFile {
 public:
  explicit ResultsJson(RunDirectory dir)
      : RewrittenFile(std::move(dir), [](const RunDirectory& d, const RunResult& run) { d.write_results(run); }) {}
  void finished(const RunResult& run, const ExperimentResult& experiment) override {
    dir().journal_experiment(experiment);
    RewrittenFile::finished(run, experiment);
  }
  void end(const RunResult& run) override {
    RewrittenFile::end(run);
    dir().retire_journal();
  }
};

class HtmlReport final : public Sink {
 public:
  explicit HtmlReport(RunDirectory dir) : dir_(std::move(dir)) {}
  void end(const RunResult& run) override {
    const auto plots = sweep_plots(run);
    if (!plots.empty()) std::filesystem::create_directories(dir_.plots());
    for (const auto& p : plots) util::write_atomically(dir_.plots() / p.file, p.svg);
    util::write_atomically(dir_.html_report(), report::html_report(run, plots));
  }

 private:
  RunDirectory dir_;
};

class NativeTraces final : public Sink {
 public:
  explicit NativeTraces(RunDirectory dir) : dir_(std::move(dir)) {}
  void finished(const RunResult&, const ExperimentResult& e) override {
    const auto& m = e.measurement;
    place(m.trace, dir_.native_trace(m.experiment));
    if (m.cold) place(m.cold->trace, dir_.cold_trace(m.experiment));
  }

 private:
  static void place(const outcome::TraceSource& trace, const std::filesystem::path& target) {
    if (!trace || trace.file() == target) return;
    std::filesystem::create_directories(target.parent_path());
    if (trace.file().empty()) trace::save(*trace, target);
    else std::filesystem::copy_file(trace.file(), target, std::filesystem::copy_options::overwrite_existing);
  }

  RunDirectory dir_;
};

class ChromeTraces final : public Sink {
 public:
  explicit ChromeTraces(RunDirectory dir) : dir_(std::move(dir)) {}
  void finished(const RunResult& run, const ExperimentResult& e) override {
    const auto& m = e.measurement;
    if (!m.trace) return;
    const auto file = dir_.chrome_trace(m.experiment);
    std::filesystem::create_directories(file.parent_path());
    write_chrome_trace(*m.trace, analysis::kernel_occupancies(*m.trace), {run.series + " / " + m.experiment, run.id + "/" + m.experiment},
                       file);
  }

 private:
  RunDirectory dir_;
};

// The run as expr.log tells it: its start, where each experiment ran, its phases, how it ended.
class RunLog final : public Sink {
 public:
  void begin(const RunResult& run) override {
    log::info("run {}: series {} from {}, {} experiments, into {}", run.id, run.series, run.series_file, run.planned, run.run_dir.string());
  }
  void started(const std::string& experiment, const outcome::Placement& placement) override {
    log::info("{}: started on {}", experiment, placement.device == Device::cuda ? fmt::format("cuda:{}", placement.index) : "cpu");
  }
  void progress(const std::string& experiment, std::string_view phase, std::string_view) override {
    auto& last = phases_[experiment];
    if (last != phase) log::debug("{}: {}", experiment, phase);
    last = std::string(phase);
  }
  void finished(const RunResult&, const ExperimentResult& e) override {
    const auto& m = e.measurement;
    phases_.erase(m.experiment);
    log::info("{}: {}{}", m.experiment, outcome::to_string(m.status), m.reason.empty() ? "" : " — " + m.reason);
  }
  void end(const RunResult& run) override {
    const auto t = tally(run);
    log::info("run {} ended: {} confirmed, {} contradicted, {} not evaluable, {} pending; {} required failed, {} experiments failed", run.id,
              t.confirmed, t.contradicted, t.not_evaluable, t.pending, t.required_failed, t.experiments_failed);
  }

 private:
  std::map<std::string, std::string> phases_;
};

class ProgressLine final : public Sink {
 public:
  void begin(const RunResult& run) override {
    total_ = run.planned;
    done_ = run.experiments.size();  // those a resumed run restored
  }

  void started(const std::string& experiment, const outcome::Placement& placement) override {
    auto& s = running_[experiment];
    s.start = std::chrono::steady_clock::now();
    s.where = placement.device == Device::cuda ? fmt::format("cuda:{}", placement.index) : "cpu";
    s.order = ++started_;
    update(experiment, "starting", "");
  }

  void progress(const std::string& experiment, std::string_view phase, std::string_view detail) override {
    update(experiment, phase, detail);
  }

  void finished(const RunResult& run, const ExperimentResult& e) override {
    const auto& m = e.measurement;
    running_.erase(m.experiment);
    ++done_;
    say(fmt::format("{} [{}/{}] {}: {}{}", m.status == outcome::Status::ok ? "done" : "    ", done_, std::max(total_, run.experiments.size()),
                    m.experiment, outcome::to_string(m.status), m.reason.empty() ? "" : " — " + m.reason));
  }

  void end(const RunResult&) override {
    if (tty_) fmt::print(stderr, "\r\033[K");
  }

 private:
  struct Running {
    std::chrono::steady_clock::time_point start;
    std::string where, phase, detail;
    std::size_t order = 0;  // when it started, among the run's experiments
  };

  // With several workers (`expr run --gpus`), the terminal's line shows each busy one, in the order
  // they started; a log (not a terminal) gets a line per phase of each.
  void update(const std::string& experiment, std::string_view phase, std::string_view detail) {
    auto& s = running_[experiment];
    const auto now = std::chrono::steady_clock::now();
    const auto one = [&](const std::string& name, const Running& r) {
      return fmt::format("{} on {}: {}{}{} ({:.1f} s)", name, r.where, r.phase, r.detail.empty() ? "" : " — ", r.detail,
                         std::chrono::duration<double>(now - r.start).count());
    };
    const bool changed = phase != s.phase;
    s.phase = std::string(phase);
    s.detail = std::string(detail);
    if (tty_) {
      std::vector<std::pair<std::size_t, std::string>> busy;
      for (const auto& [name, r] : running_) busy.emplace_back(r.order, one(name, r));
      std::sort(busy.begin(), busy.end());
      std::string line = fmt::format("[{}/{}]", done_ + 1, total_);
      for (const auto& [order, text] : busy) line += (busy.size() > 1 ? " | " : " ") + text;
      fmt::print(stderr, "\r\033[K{}", line);
      std::fflush(stderr);
    } else if (changed) {
      fmt::print(stderr, "[{}/{}] {}\n", done_ + 1, total_, one(experiment, s));
    }
  }

  // A line above the progress line.
  void say(const std::string& line) {
    if (tty_) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "{}\n", line);
  }

  bool tty_ = ::isatty(STDERR_FILENO);
  std::size_t total_ = 0, done_ = 0, started_ = 0;
  std::map<std::string, Running> running_;
};

class TerminalReport final : public Sink {
 public:
  void end(const RunResult& run) override { fmt::print("{}", report::terminal_report(run, ::isatty(STDOUT_FILENO))); }
};

}  // namespace

void Multiplex::begin(const RunResult& run) {
  for (auto& s : sinks_) s->begin(run);
}
void Multiplex::started(const std::string& experiment, const outcome::Placement& placement) {
  for (auto& s : sinks_) s->started(experiment, placement);
}
void Multiplex::progress(const std::string& experiment, std::string_view phase, std::string_view detail) {
  for (auto& s : sinks_) s->progress(experiment, phase, detail);
}
void Multiplex::finished(const RunResult& run, const ExperimentResult& experiment) {
  for (auto& s : sinks_) s->finished(run, experiment);
}
void Multiplex::end(const RunResult& run) {
  for (auto& s : sinks_) s->end(run);
}

namespace sinks {

std::unique_ptr<Sink> results_json(RunDirectory dir) { return std::make_unique<ResultsJson>(std::move(dir)); }
std::unique_ptr<Sink> markdown_summary(RunDirectory dir) {
  return std::make_unique<RewrittenFile>(
      std::move(dir), [](const RunDirectory& d, const RunResult& run) { util::write_atomically(d.summary(), markdown_report(run)); });
}
std::unique_ptr<Sink> junit(RunDirectory dir) {
  return std::make_unique<RewrittenFile>(
      std::move(dir), [](const RunDirectory& d, const RunResult& run) { util::write_atomically(d.junit(), junit_report(run)); });
}
std::unique_ptr<Sink> html_report(RunDirectory dir) { return std::make_unique<HtmlReport>(std::move(dir)); }
std::unique_ptr<Sink> native_traces(RunDirectory dir) { return std::make_unique<NativeTraces>(std::move(dir)); }
std::unique_ptr<Sink> chrome_traces(RunDirectory dir) { return std::make_unique<ChromeTraces>(std::move(dir)); }
std::unique_ptr<Sink> run_log() { return std::make_unique<RunLog>(); }
std::unique_ptr<Sink> progress_line() { return std::make_unique<ProgressLine>(); }
std::unique_ptr<Sink> terminal_report() { return std::make_unique<TerminalReport>(); }

}  // namespace sinks

}  // namespace expr::report
