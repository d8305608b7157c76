// The commands that read recorded runs and series, as the command line prints them: validate,
// list, show, replay, merge and metrics; and how a run's output ends.
#include "cli/commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "analysis/metrics.hpp"
#include "report/resume.hpp"
#include "report/summary.hpp"
#include "series/series.hpp"
#include "session/loaded_series.hpp"
#include "session/merge.hpp"
#include "session/replay.hpp"
#include "util/log.hpp"

namespace expr::cli {

namespace fs = std::filesystem;
using session::resume_command;

void print_expansion(const series::Plan& plan) {
  for (const auto& e : plan.experiments) fmt::print("  {}\n", e.name);
  fmt::print("{} experiment{}\n", plan.experiments.size(), plan.experiments.size() == 1 ? "" : "s");
}

int validate(const fs::path& file, const std::vector<std::string>& axes) {
  const auto loaded = session::load_series(file, axes);
  print_expansion(loaded.plan);
  fmt::print("{}: series {} is valid: {} experiments, {} guesses\n", file.string(), loaded.plan.name, loaded.plan.experiments.size(),
             loaded.guess_count());
  return ok;
}

namespace {

std::string type_name(ParamType t) {
  switch (t) {
    case ParamType::boolean: return "bool";
    case ParamType::integer: return "int";
    case ParamType::number: return "number";
    case ParamType::string: return "string";
  }
  return "?";
}

}  // namespace

int list(const std::vector<fs::path>& extra_dirs) {
  const auto found = session::find_plugins(extra_dirs);
  if (found.plugins.empty()) {
    fmt::print("no plugins found in:\n");
    for (const auto& d : found.searched) fmt::print("  {} ({})\n", d.path.string(), loader::to_string(d.origin));
    return ok;
  }
  int status = ok;
  for (const auto& plugin : found.plugins) {
    if (!plugin.library) {
      log::error("{}", plugin.problem);
      status = bad_input;
      continue;
    }
    const auto& d = plugin.library->description();
    std::vector<std::string> devices;
    for (auto dev : d.devices) devices.push_back(dev == Device::cuda ? "cuda" : "cpu");
    fmt::print("{} — {}\n  file: {} ({})\n  devices: {}\n", d.name, d.summary, plugin.place.file.string(), loader::to_string(plugin.place.origin),
               fmt::format("{}", fmt::join(devices, ", ")));
    for (const auto& p : d.params) {
      fmt::print("  {} ({}, default {}){}: {}\n", p.name, type_name(p.type), series::to_string(p.default_value),
                 p.choices.empty() ? "" : fmt::format(" one of {}", fmt::join(p.choices, "|")), p.doc);
    }
  }
  return status;
}

namespace {

// Where the run's Chrome traces are, for Perfetto, TensorBoard and HTA, when it has any.
void print_traces_line(const report::RunDirectory& dir) {
  if (fs::exists(dir.traces())) {
    fmt::print("traces:  {} (Perfetto, TensorBoard, HTA: docs/chrome-trace.md)\n", dir.traces().string());
    return;
  }
  // Before traces/ had a folder of its own, each Chrome trace lay beside its native trace.
  if (fs::exists(dir.root() / "experiments"))
    for (const auto& e : fs::directory_iterator(dir.root() / "experiments"))
      if (fs::exists(e.path() / "chrome_trace.json")) {
        fmt::print("traces:  {}/*/chrome_trace.json (an older layout; `expr replay {} --out DIR` writes them for TensorBoard and HTA)\n",
                   (dir.root() / "experiments").string(), dir.root().string());
        return;
      }
}

}  // namespace

void print_ending(const report::RunDirectory& dir, const std::vector<NextStep>& next) {
  std::vector<std::pair<fs::path, std::string_view>> files;
  if (fs::exists(dir.html_report())) files.emplace_back(dir.html_report(), "the plots and every guess; opens offline");
  if (fs::exists(dir.summary())) files.emplace_back(dir.summary(), "the same as Markdown");
  std::size_t width = 0;
  for (const auto& [file, why] : files) width = std::max(width, file.string().size());
  fmt::print("\n");
  for (std::size_t i = 0; i < files.size(); ++i)
    fmt::print("{:9}{:{}}  ({})\n", i == 0 ? "open:" : "", files[i].first.string(), width, files[i].second);
  print_traces_line(dir);
  if (next.empty()) return;
  // Each command under what it does, so that it can be copied as it stands.
  fmt::print("next:\n");
  for (const auto& step : next) fmt::print("  # {}\n  {}\n", step.why, step.command);
}

namespace {

// A merged run some of whose shards did not finish: the commands that run the rest in their shards
// and merge again.
void print_merged_incomplete(const report::RunResult& run, const fs::path& run_dir, const std::string& program, std::size_t with_result) {
  std::vector<std::string> dirs, steps;
  for (const auto& m : run.merged) {
    if (!m.dir.empty()) dirs.push_back(shell_word(m.dir));
    if (m.missing == 0) continue;
    if (m.dir.empty()) {
      const auto dir = fmt::format("shard-{}", m.shard.substr(0, m.shard.find('/')));
      steps.push_back(fmt::format("shard {} was not merged ({} experiment{}): {} run {} --shard {} --out {}", m.shard, m.missing,
                                  m.missing == 1 ? "" : "s", shell_word(program), shell_word(run.series_file), m.shard, dir));
      dirs.push_back(dir);
    } else {
      steps.push_back(fmt::format("shard {} did not finish {} experiment{}: {}", m.shard, m.missing, m.missing == 1 ? "" : "s",
                                  resume_command(program, m.dir)));
    }
  }
  if (!steps.empty())
    fmt::print("\nincomplete: merged from shards, {} of {} planned experiments have a result. This runs the others in their shards:\n  "
               "{}\nand this merges again:\n  {} merge {} --out {} --force\n",
               with_result, run.planned, fmt::join(steps, "\n  "), shell_word(program), fmt::join(dirs, " "), shell_word(run_dir.string()));
}

// A run that did not finish every experiment, and the command that runs the rest. A run that ended
// has finished set; one that stopped before (kill -9, a reboot), or is still going, has not. An
// interrupted run ended, but not all its experiments did. A merged run is completed in its shards,
// then merged again.
void print_incomplete(const report::RunResult& run, const fs::path& run_dir, const std::string& program) {
  const auto with_result = static_cast<std::size_t>(
      std::count_if(run.experiments.begin(), run.experiments.end(), [](const auto& e) { return report::has_result(e.measurement); }));
  if (!run.merged.empty())
    print_merged_incomplete(run, run_dir, program, with_result);
  else if (!run.interrupted.empty())
    fmt::print("\nincomplete: the run was interrupted ({}); {} of {} planned experiments did not finish. This runs them:\n  {}\n",
               run.interrupted, report::tally(run).experiments_interrupted + run.planned - std::min(run.planned, run.experiments.size()),
               run.planned, resume_command(program, run_dir));
  else if (run.finished.empty())
    fmt::print("\nincomplete: the run has not ended; {} of {} planned experiments have a result. If it stopped, this runs the "
               "others:\n  {}\n",
               with_result, run.planned, resume_command(program, run_dir));
}

}  // namespace

int show(const fs::path& run_dir, const std::string& program, bool all) {
  const report::RunDirectory dir(run_dir);
  const auto run = session::or_stop(session::Status::bad_input, [&] { return dir.read(); });
  fmt::print("{}", session::or_stop(session::Status::bad_input, [&] {
               return report::terminal_report(run, ::isatty(STDOUT_FILENO), all ? run.experiments.size() : report::listed_at_most);
             }));
  print_incomplete(run, run_dir, program);
  if (fs::exists(dir.gate())) fmt::print("\n{}", session::file_text(dir.gate()));
  const auto self = shell_word(run_dir.string());
  const auto series_file = run.series_file.empty() ? std::string("SERIES.yaml") : shell_word(run.series_file);
  print_ending(dir, {{fmt::format("{} run {} --baseline {}", shell_word(program), series_file, self), "run the series again, gated against this run"},
                     {fmt::format("{} compare {} OTHER_RUN_DIR", shell_word(program), self), "another run of " + run.series + " against this one"},
                     {fmt::format("{} replay {} --series EDITED.yaml --out DIR", shell_word(program), self),
                      "judge edited guesses against these traces"}});
  return ok;
}

int replay(const session::ReplayArgs& args, const std::string& program) {
  const auto judged = session::replay(args);
  if (args.out)
    print_ending(report::RunDirectory(*args.out), {{fmt::format("{} show {}", shell_word(program), shell_word(args.out->string())), "this report again"}});
  else
    fmt::print("\n`{} replay {} --out DIR` writes report.html, summary.md and the Chrome traces into DIR\n", shell_word(program),
               shell_word(args.run_dir.string()));
  return exit_code(judged.status);
}

int merge(const session::MergeArgs& args) {
  const auto merged = session::merge(args);
  const auto& run = merged.judged.run;
  fmt::print("\nmerged {} shard{} into {}: {} of {} experiments have a result\n", merged.shards, merged.shards == 1 ? "" : "s",
             report::RunDirectory(args.out).results().string(), run.planned - merged.missing.size(), run.planned);
  if (!merged.missing.empty()) {
    fmt::print("missing {} experiment{}:\n", merged.missing.size(), merged.missing.size() == 1 ? "" : "s");
    for (const auto& m : merged.missing) fmt::print("  {}\n", m);
    fmt::print("`expr show {}` says how to run them\n", args.out.string());
  }
  return exit_code(merged.judged.status);
}

int metrics() {
  for (const auto& m : analysis::catalog()) {
    std::string args;
    for (const auto& a : m.args) args += (args.empty() ? "" : ", ") + a.name + "=";
    fmt::print("{}{}\n    {}\n", m.name, m.args.empty() ? "" : "(" + args + ")", m.doc);
    for (const auto& a : m.args) fmt::print("    {}: {}\n", a.name, a.doc);
    for (const auto& f : m.fields) fmt::print("    .{}: {}\n", f.name, f.doc);
  }
  fmt::print("{}\n", analysis::cold_doc);
  return ok;
}

}  // namespace expr::cli
