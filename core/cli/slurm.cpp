// `expr slurm`: a series as a Slurm job array, one shard a task (`expr run --shard K/N`), and a
// merge job that waits for the whole array (afterany) and joins what the shards left (`expr
// merge`). Everything goes into one run root on a filesystem the cluster's nodes share. Submitting
// again the same way resumes each shard that stopped, so only what is missing runs again.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <iterator>

#include "cli/commands.hpp"
#include "report/run_directory.hpp"
#include "series/shard.hpp"
#include "util/atomic_file.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

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

struct Scripts {
  fs::path array, merge;
};

// The shard directories under `root` that hold a run of another shard count or series than this
// submission's: resuming them would mix two submissions. One line each.
std::vector<std::string> foreign_shards(const fs::path& root, std::size_t count, const std::string& fingerprint) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path().filename().string().rfind("shard-", 0) != 0 || !fs::exists(entry.path() / "results.json")) continue;
    try {
      const auto run = report::RunDirectory(entry.path()).read();
      if (!run.shard)
        out.push_back(fmt::format("{} holds a run that is no shard", entry.path().string()));
      else if (run.shard->count != count || run.shard->series_fingerprint != fingerprint)
        out.push_back(fmt::format("{} holds shard {} of {}", entry.path().string(), run.shard->str(),
                                  run.shard->series_fingerprint == fingerprint ? "this series" : "another series (or another version of it)"));
    } catch (const std::exception& e) {
      out.push_back(fmt::format("{}: {}", entry.path().string(), e.what()));
    }
  }
  return out;
}

}  // namespace

int slurm(const SlurmArgs& args) {
  const auto loaded = load_series(args.series);
  if (!loaded) return bad_input;
  const auto points = loaded->plan.experiments.size();
  if (args.shards > points) {
    fmt::print(stderr, "error: --shards {}: the series has {} experiment{}, so shards {} and above would be empty\n", args.shards, points,
               points == 1 ? "" : "s", points);
    return bad_input;
  }
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::optional<std::string>>>{
           {"--partition", args.partition}, {"--time", args.time}, {"--account", args.account}, {"--qos", args.qos}, {"--constraint", args.constraint}})
    if (value && !sbatch_value(*value)) {
      fmt::print(stderr, "error: {} '{}': an #SBATCH line cannot hold a double quote or a line break\n", name, *value);
      return bad_input;
    }
  for (const auto& line : args.sbatch_lines)
    if (line.find_first_of("\n\r") != std::string::npos) {
      fmt::print(stderr, "error: --sbatch-line '{}': one line each, without a line break\n", line);
      return bad_input;
    }

  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  const auto series_file = fs::absolute(args.series).lexically_normal();
  const auto root = fs::absolute(args.out.value_or(default_run_dir(loaded->plan.name))).lexically_normal();
  if (ec || !sbatch_value(root.string())) {
    fmt::print(stderr, "error: {}\n", ec ? "cannot tell where the expr program is (/proc/self/exe): " + ec.message()
                                         : "--out " + root.string() + ": an #SBATCH line cannot hold a double quote or a line break");
    return ec ? cannot_write : bad_input;
  }
  std::ifstream text_in(series_file);
  const std::string series_text(std::istreambuf_iterator<char>(text_in), {});
  const auto fingerprint = series::fingerprint(loaded->plan, series_text, {});

  const Scripts scripts{root / "shards.sbatch", root / "merge.sbatch"};
  try {
    fs::create_directories(root / "logs");
    if (const auto foreign = foreign_shards(root, args.shards, fingerprint); !foreign.empty()) {
      for (const auto& line : foreign) fmt::print(stderr, "error: {}\n", line);
      fmt::print(stderr, "error: {} holds shards of another submission; give another --out\n", root.string());
      return bad_input;
    }
    // Options both jobs need to be allowed to run; what shapes the work (GPUs, constraint, extra
    // lines) is the array's alone, as the merge reads files and needs no accelerator.
    std::vector<std::pair<std::string, std::string>> common;
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::optional<std::string>>>{
             {"partition", args.partition}, {"account", args.account}, {"qos", args.qos}, {"time", args.time}})
      if (value) common.emplace_back(name, *value);

    auto array_options = common;
    array_options.insert(array_options.begin(), {{"job-name", job_name(loaded->plan.name, "")},
                                                 {"array", fmt::format("0-{}", args.shards - 1)},
                                                 {"output", (root / "logs" / "shard-%a-job-%A.out").string()}});
    if (args.constraint) array_options.emplace_back("constraint", *args.constraint);
    if (args.gpus_per_task > 0) array_options.emplace_back("gpus-per-task", std::to_string(args.gpus_per_task));
    // A task's shard resumes where a run is already there (an earlier submission of this array), so
    // that submitting again runs only the experiments without a result. No task touches the
    // history: a history that changed between two tasks' starts would balance their shards
    // differently, and N writers of one SQLite file on a shared filesystem is asking for trouble.
    const auto expr = shell_word(self.string());
    // A task of several GPUs runs a worker on each (`expr run --gpus all`: the GPUs Slurm gave the
    // task, in its CUDA_VISIBLE_DEVICES); a task of one runs as a plain run does, on its GPU.
    const std::string gpus = args.gpus_per_task > 1 ? " --gpus all" : "";
    util::write_atomically(
        scripts.array,
        sbatch_header(array_options, args.sbatch_lines) +
            fmt::format("# Written by `expr slurm`: shard $SLURM_ARRAY_TASK_ID of {count} of the series {series}.\n"
                        "set -u\n"
                        "shard={root}/shard-$SLURM_ARRAY_TASK_ID\n"
                        "if [ -e \"$shard/plan.json\" ] && [ -e \"$shard/results.json\" ]; then\n"
                        "  exec {expr} run --resume \"$shard\" --no-history{gpus}\n"
                        "fi\n"
                        "exec {expr} run {series} --shard \"$SLURM_ARRAY_TASK_ID/{count}\" --out \"$shard\" --force --no-history{gpus}\n",
                        fmt::arg("count", args.shards), fmt::arg("series", shell_word(series_file.string())),
                        fmt::arg("root", shell_word(root.string())), fmt::arg("expr", expr), fmt::arg("gpus", gpus)));

    auto merge_options = common;
    merge_options.insert(merge_options.begin(),
                         {{"job-name", job_name(loaded->plan.name, "-merge")}, {"output", (root / "logs" / "merge-job-%j.out").string()}});
    util::write_atomically(
        scripts.merge,
        sbatch_header(merge_options, {}) +
            fmt::format("# Written by `expr slurm`: joins the shards of {series} that ran, once the array has ended.\n"
                        "set -u\n"
                        "shopt -s nullglob\n"
                        "shards=({root}/shard-*)\n"
                        "if [ ${{#shards[@]}} -eq 0 ]; then\n"
                        "  echo \"expr slurm: no task of the array left a shard directory in \"{root} >&2\n"
                        "  exit {incomplete}\n"
                        "fi\n"
                        "exec {expr} merge \"${{shards[@]}}\" --out {merged} --force\n",
                        fmt::arg("series", shell_word(series_file.string())), fmt::arg("root", shell_word(root.string())),
                        fmt::arg("incomplete", static_cast<int>(incomplete)), fmt::arg("expr", expr),
                        fmt::arg("merged", shell_word((root / "merged").string()))));
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return cannot_write;
  }

  fmt::print("wrote {}: a job array of {} task{}, task K running `expr run --shard K/{}` into {}/shard-K\n", scripts.array.string(),
             args.shards, args.shards == 1 ? "" : "s", args.shards, root.string());
  fmt::print("wrote {}: `expr merge` of the shards into {}, once every task has ended\n", scripts.merge.string(), (root / "merged").string());
  if (!args.submit) {
    fmt::print("submit them (or run again with --submit):\n  array=$(sbatch --parsable {}) && sbatch --dependency=afterany:${{array%%;*}} {}\n",
               shell_word(scripts.array.string()), shell_word(scripts.merge.string()));
    return ok;
  }

  int status = 0;
  const auto array_printed = capture({"sbatch", "--parsable", scripts.array.string()}, status);
  const auto array_id = job_id(array_printed);
  if (status != 0 || !array_id) {
    fmt::print(stderr, "error: sbatch {} {}\n", scripts.array.string(),
               status == 127 ? "could not be started (is Slurm's sbatch on PATH?)" : fmt::format("failed (exit {}){}", status, array_printed));
    return cannot_write;
  }
  fmt::print("submitted the array: job {} (tasks {}_0 to {}_{})\n", *array_id, *array_id, *array_id, args.shards - 1);
  const auto merge_printed = capture({"sbatch", "--parsable", "--dependency=afterany:" + *array_id, scripts.merge.string()}, status);
  const auto merge_id = job_id(merge_printed);
  if (status != 0 || !merge_id) {
    fmt::print(stderr, "error: sbatch {} failed (exit {}); the array runs without its merge: `scancel {}` stops it\n",
               scripts.merge.string(), status, *array_id);
    return cannot_write;
  }
  fmt::print("submitted the merge: job {}, once the array has ended; its log will be {}\n", *merge_id,
             (root / "logs" / fmt::format("merge-job-{}.out", *merge_id)).string());
  return ok;
}

}  // namespace expr::cli
