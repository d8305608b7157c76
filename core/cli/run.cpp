// `expr run`, `expr calibrate` and `expr slurm` as the command line prints them; what they do is
// measure/'s, on the runner (built only with CUDA: cli/without_runner.cpp stands in otherwise).
#include <fmt/format.h>
#include <unistd.h>

#include <optional>

#include "cli/commands.hpp"
#include "history/calibration.hpp"
#include "measure/run.hpp"
#include "measure/slurm.hpp"
#include "session/prepared_run.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

const bool has_runner = true;

namespace {

// A dry run: the experiments that would run.
void print_dry_run(const session::RunArgs& args, const session::PreparedRun& p) {
  if (!args.resume) return print_expansion(p.loaded.plan);
  for (const auto& name : p.left) fmt::print("  {}\n", name);
  fmt::print("{} of {} experiments to run\n", p.left.size(), p.run.planned);
}

void print_resuming(const session::PreparedRun& p) {
  fmt::print(stderr, "resuming {}: {} of {} experiments have a result; running the other {}\n", p.dir->root().string(), p.restored.size(),
             p.run.planned, p.left.size());
  if (const std::string now = report::expr_revision(); now != p.run.revision)
    fmt::print(stderr, "note: expr {} started the run; expr {} runs the rest\n", p.run.revision, now);
}

// Says on stderr how many experiments an interrupted run left, and how to run them.
void print_interruption(const report::RunResult& run) {
  const auto t = report::tally(run);
  const report::RunDirectory dir(run.run_dir);
  fmt::print(stderr, "interrupted ({}): {} of {} experiments did not finish; they are marked \"interrupted\" in {}, and "
             "`expr run --resume {}` runs them\n",
             run.interrupted, t.experiments_interrupted, run.planned, dir.results().string(), dir.root().string());
}

// After a finished run: its report again, and with a history the next run gated against this one
// and, where the machine's noise was never measured, the calibration that measures it.
std::vector<NextStep> next_steps(const session::RunArgs& args, const report::RunResult& run, bool recorded, bool calibrated) {
  const auto program = shell_word(args.program);
  const auto series = shell_word(run.series_file);
  // A history given by --history (not found by default) must be named again.
  const auto history = args.history ? " --history " + shell_word(args.history->string()) : std::string();
  std::vector<NextStep> next{{fmt::format("{} show {}", program, shell_word(run.run_dir.string())), "this report again"}};
  if (!recorded) return next;
  next.push_back({fmt::format("{} run {} --baseline @last{}", program, series, history), "the next run, gated against this one (exit 5: a regression)"});
  if (!calibrated)
    next.push_back({fmt::format("{} calibrate {} --runs 5{}", program, series, history),
                    "this machine's run-to-run noise, so that gates and timing guesses know it"});
  return next;
}

}  // namespace

int run(const session::RunArgs& args) {
  // The devices are probed while the series and its plugins load.
  std::optional<runner::PendingProbe> probe;
  if (!args.dry_run) probe.emplace();
  auto prepared = session::prepare_run(args);
  if (args.dry_run) {
    print_dry_run(args, prepared);
    return ok;
  }
  if (args.resume) print_resuming(prepared);
  measure::SeriesRun series_run(args, std::move(prepared), *probe);
  auto x = series_run.execute();
  const auto& dir = series_run.dir();
  fmt::print("\nresults: {}\n", dir.results().string());
  if (const auto* store = series_run.store()) fmt::print("history: {} (run {})\n", store->file().string(), x.run.id);
  if (x.signal != 0) {
    print_interruption(x.run);
    print_ending(dir, {{session::resume_command(args.program, dir.root()), "run the experiments that did not finish"}});
    return exit_code(session::Status::interrupted, x.signal);
  }
  auto status = session::status_of(report::tally(x.run));
  if (series_run.gated()) {
    const auto gate = series_run.gate(x);
    if (gate.comparison) fmt::print("{}", history::terminal_text(*gate.comparison, ::isatty(STDOUT_FILENO)));
    status = session::gated(status, gate.status);
  }
  print_ending(dir, next_steps(args, x.run, series_run.store() != nullptr, series_run.calibrated()));
  if (!x.history_error.empty() && status == session::Status::ok) return cannot_write;
  return exit_code(status);
}

int calibrate(const session::CalibrateArgs& args) {
  const auto c = measure::calibrate(args);
  if (c.interrupted) {
    print_interruption(*c.interrupted);
    return exit_code(c.status, c.signal);
  }
  fmt::print("{}", history::terminal_text(c.calibration));
  fmt::print("\ncalibration {} stored in {}: later runs of {} on this machine carry each point's run-to-run noise\nreport: {}\n", c.id,
             c.history_file.string(), c.series, c.report_file.string());
  return exit_code(c.status);
}

int slurm(const session::SlurmArgs& args) {
  const auto jobs = measure::write_slurm_jobs(args, incomplete);
  fmt::print("wrote {}: a job array of {} task{}, task K running `expr run --shard K/{}` into {}/shard-K\n", jobs.array.string(), jobs.shards,
             jobs.shards == 1 ? "" : "s", jobs.shards, jobs.root.string());
  fmt::print("wrote {}: `expr merge` of the shards into {}, once every task has ended\n", jobs.merge.string(), (jobs.root / "merged").string());
  if (!args.submit) {
    fmt::print("submit them (or run again with --submit):\n  array=$(sbatch --parsable {}) && sbatch --dependency=afterany:${{array%%;*}} {}\n",
               shell_word(jobs.array.string()), shell_word(jobs.merge.string()));
    return ok;
  }
  const auto array_id = measure::submit_array(jobs);
  fmt::print("submitted the array: job {} (tasks {}_0 to {}_{})\n", array_id, array_id, array_id, jobs.shards - 1);
  const auto merge_id = measure::submit_merge(jobs, array_id);
  fmt::print("submitted the merge: job {}, once the array has ended; its log will be {}\n", merge_id,
             (jobs.root / "logs" / fmt::format("merge-job-{}.out", merge_id)).string());
  return ok;
}

}  // namespace expr::cli
