// The job scripts of `expr slurm`, and their submission with sbatch.
#include "measure/slurm.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <optional>
#include <utility>
#include <vector>

#include "report/run_directory.hpp"
#include "series/shard.hpp"
#include "session/loaded_series.hpp"
#include "session/places.hpp"
#include "session/status.hpp"
#include "util/atomic_file.hpp"

namespace expr::measure {

namespace fs = std::filesystem;
using session::Status;
using session::Stop;

namespace {

// The value of an #SBATCH line: sbatch splits those lines at blanks but keeps a double-quoted
// value whole, and has no escape for a quote or a line break inside one.
std::optional<std::string> sbatch_value(const std::string& value) {
  if (value.find_first_of("\"\n\r") != std::string::npos) return std::nullopt;
  if (value.find_first_of(" \t") == std::string::npos && !value.empty()) return value;
  return "\"" + value + "\"";
}

// The #SBATCH lines of one script: `options` as NAME=VALUE, then `extra` as given.
std::string sbatch_header(const std::vector<std::pair<std::string, std::string>>& options, const std::vector<std::string>& extra) {
  std::string out = "#!/bin/bash\n";
  for (const auto& [name, value] : options) out += fmt::format("#SBATCH --{}={}\n", name, *sbatch_value(value));
  for (const auto& line : extra) out += (line.rfind("#SBATCH", 0) == 0 ? line : "#SBATCH " + line) + "\n";
  return out;
}

// Runs `argv` (found on PATH) and returns what it printed on stdout, with its stderr left on ours;
// exit_code is its exit status, or 127 when it could not be started.
std::string capture(const std::vector<std::string>& argv, int& exit_code) {
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) {
    exit_code = 127;
    return {};
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_ends[1], STDOUT_FILENO);
    ::close(pipe_ends[0]);
    ::close(pipe_ends[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_ends[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_ends[0], buffer, sizeof buffer)) != 0;)
    if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
    else if (errno != EINTR) break;
  ::close(pipe_ends[0]);
  int status = 0;
  exit_code = pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : 127;
  return out;
}

// The job id `sbatch --parsable` prints: "ID" or "ID;CLUSTER".
std::optional<std::string> job_id(const std::string& printed) {
  const auto id = printed.substr(0, printed.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return id;
}

// A job name from the series' name: what squeue shows, in characters any #SBATCH line takes.
std::string job_name(const std::string& series, const std::string& suffix) {
  std::string name = "expr-" + series + suffix;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return name;
}

// Stops on an option no #SBATCH line can hold, or more shards than the series has experiments.
void check_options(const session::SlurmArgs& args, std::size_t points) {
  if (args.shards > points)
    throw Stop(Status::bad_input, fmt::format("--shards {}: the series has {} experiment{}, so shards {} and above would be empty", args.shards,
                                              points, points == 1 ? "" : "s", points));
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::optional<std::string>>>{
           {"--partition", args.partition}, {"--time", args.time}, {"--account", args.account}, {"--qos", args.qos}, {"--constraint", args.constraint}})
    if (value && !sbatch_value(*value))
      throw Stop(Status::bad_input, fmt::format("{} '{}': an #SBATCH line cannot hold a double quote or a line break", name, *value));
  for (const auto& line : args.sbatch_lines)
    if (line.find_first_of("\n\r") != std::string::npos)
      throw Stop(Status::bad_input, fmt::format("--sbatch-line '{}': one line each, without a line break", line));
}

// Stops when shard directories under `root` hold a run of another shard count or series than this
// submission's: resuming them would mix two submissions.
void refuse_foreign_shards(const fs::path& root, std::size_t count, const std::string& fingerprint) {
  std::vector<Stop::Line> lines;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path().filename().string().rfind("shard-", 0) != 0 || !fs::exists(entry.path() / "results.json")) continue;
    try {
      const auto run = report::RunDirectory(entry.path()).read();
      if (!run.shard)
        lines.push_back({true, fmt::format("{} holds a run that is no shard", entry.path().string())});
      else if (run.shard->count != count || run.shard->series_fingerprint != fingerprint)
        lines.push_back({true, fmt::format("{} holds shard {} of {}", entry.path().string(), run.shard->str(),
                                           run.shard->series_fingerprint == fingerprint ? "this series" : "another series (or another version of it)")});
    } catch (const std::exception& e) {
      lines.push_back({true, fmt::format("{}: {}", entry.path().string(), e.what())});
    }
  }
  if (lines.empty()) return;
  lines.push_back({true, fmt::format("{} holds shards of another submission; give another --out", root.string())});
  throw Stop(Status::bad_input, std::move(lines));
}

// The array's script: task K runs shard K/N into ROOT/shard-K, or resumes it where a run is
// already there (an earlier submission of this array), so that submitting again runs only the
// experiments without a result. No task touches the history: a history that changed between two
// tasks' starts would balance their shards differently, and N writers of one SQLite file on a
// shared filesystem is asking for trouble. A task of several GPUs runs a worker on each (`expr run
// --gpus all`: the GPUs Slurm gave the task); a task of one runs as a plain run does, on its GPU.
std::string array_script(const session::SlurmArgs& args, const std::vector<std::pair<std::string, std::string>>& options,
                         const fs::path& series_file, const fs::path& root, const std::string& expr) {
  const std::string gpus = args.gpus_per_task > 1 ? " --gpus all" : "";
  return sbatch_header(options, args.sbatch_lines) +
         fmt::format("# Written by `expr slurm`: shard $SLURM_ARRAY_TASK_ID of {count} of the series {series}.\n"
                     "set -u\n"
                     "shard={root}/shard-$SLURM_ARRAY_TASK_ID\n"
                     "if [ -e \"$shard/plan.json\" ] && [ -e \"$shard/results.json\" ]; then\n"
                     "  exec {expr} run --resume \"$shard\" --no-history{gpus}\n"
                     "fi\n"
                     "exec {expr} run {series} --shard \"$SLURM_ARRAY_TASK_ID/{count}\" --out \"$shard\" --force --no-history{gpus}\n",
                     fmt::arg("count", args.shards), fmt::arg("series", session::shell_word(series_file.string())),
                     fmt::arg("root", session::shell_word(root.string())), fmt::arg("expr", expr), fmt::arg("gpus", gpus));
}

// The merge job's script: `expr merge` of the shard directories there are, into ROOT/merged.
std::string merge_script(const std::vector<std::pair<std::string, std::string>>& options, const fs::path& series_file, const fs::path& root,
                         const std::string& expr, int incomplete_exit) {
  return sbatch_header(options, {}) +
         fmt::format("# Written by `expr slurm`: joins the shards of {series} that ran, once the array has ended.\n"
                     "set -u\n"
                     "shopt -s nullglob\n"
                     "shards=({root}/shard-*)\n"
                     "if [ ${{#shards[@]}} -eq 0 ]; then\n"
                     "  echo \"expr slurm: no task of the array left a shard directory in \"{root} >&2\n"
                     "  exit {incomplete}\n"
                     "fi\n"
                     "exec {expr} merge \"${{shards[@]}}\" --out {merged} --force\n",
                     fmt::arg("series", session::shell_word(series_file.string())), fmt::arg("root", session::shell_word(root.string())),
                     fmt::arg("incomplete", incomplete_exit), fmt::arg("expr", expr), fmt::arg("merged", session::shell_word((root / "merged").string())));
}

}  // namespace

SlurmJobs write_slurm_jobs(const session::SlurmArgs& args, int incomplete_exit) {
  const auto loaded = session::load_series(args.series);
  check_options(args, loaded.plan.experiments.size());
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  const auto series_file = fs::absolute(args.series).lexically_normal();
  const SlurmJobs jobs{fs::absolute(args.out.value_or(session::default_run_dir(loaded.plan.name))).lexically_normal(), {}, {}, args.shards};
  if (ec) throw Stop(Status::cannot_write, "cannot tell where the expr program is (/proc/self/exe): " + ec.message());
  if (!sbatch_value(jobs.root.string()))
    throw Stop(Status::bad_input, "--out " + jobs.root.string() + ": an #SBATCH line cannot hold a double quote or a line break");
  const auto fingerprint = series::fingerprint(loaded.plan, session::file_text(series_file), {});
  auto out = jobs;
  out.array = jobs.root / "shards.sbatch";
  out.merge = jobs.root / "merge.sbatch";
  session::or_stop(Status::cannot_write, [&] {
    fs::create_directories(jobs.root / "logs");
    refuse_foreign_shards(jobs.root, args.shards, fingerprint);
    // Options both jobs need to be allowed to run; what shapes the work (GPUs, constraint, extra
    // lines) is the array's alone, as the merge reads files and needs no accelerator.
    std::vector<std::pair<std::string, std::string>> common;
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::optional<std::string>>>{
             {"partition", args.partition}, {"account", args.account}, {"qos", args.qos}, {"time", args.time}})
      if (value) common.emplace_back(name, *value);
    auto array_options = common;
    array_options.insert(array_options.begin(), {{"job-name", job_name(loaded.plan.name, "")},
                                                 {"array", fmt::format("0-{}", args.shards - 1)},
                                                 {"output", (jobs.root / "logs" / "shard-%a-job-%A.out").string()}});
    if (args.constraint) array_options.emplace_back("constraint", *args.constraint);
    if (args.gpus_per_task > 0) array_options.emplace_back("gpus-per-task", std::to_string(args.gpus_per_task));
    const auto expr = session::shell_word(self.string());
    util::write_atomically(out.array, array_script(args, array_options, series_file, jobs.root, expr));
    auto merge_options = common;
    merge_options.insert(merge_options.begin(), {{"job-name", job_name(loaded.plan.name, "-merge")},
                                                 {"output", (jobs.root / "logs" / "merge-job-%j.out").string()}});
    util::write_atomically(out.merge, merge_script(merge_options, series_file, jobs.root, expr, incomplete_exit));
  });
  return out;
}

std::string submit_array(const SlurmJobs& jobs) {
  int status = 0;
  const auto printed = capture({"sbatch", "--parsable", jobs.array.string()}, status);
  const auto id = job_id(printed);
  if (status != 0 || !id)
    throw Stop(Status::cannot_write, fmt::format("sbatch {} {}", jobs.array.string(),
                                                 status == 127 ? "could not be started (is Slurm's sbatch on PATH?)"
                                                               : fmt::format("failed (exit {}){}", status, printed)));
  return *id;
}

std::string submit_merge(const SlurmJobs& jobs, const std::string& array_id) {
  int status = 0;
  const auto printed = capture({"sbatch", "--parsable", "--dependency=afterany:" + array_id, jobs.merge.string()}, status);
  const auto id = job_id(printed);
  if (status != 0 || !id)
    throw Stop(Status::cannot_write, fmt::format("sbatch {} failed (exit {}); the array runs without its merge: `scancel {}` stops it",
                                                 jobs.merge.string(), status, array_id));
  return *id;
}

}  // namespace expr::measure
