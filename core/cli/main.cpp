// expr: state what a GPU trace should show, run the experiment, see which guesses hold.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"expr: guess what the trace shows, run the experiment, see which guesses the trace confirms"};
  app.require_subcommand(1);

  expr::cli::RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "run a series: time, trace and check every experiment");
  run_cmd->add_option("series", run.series, "series file (YAML); with --resume, the run's own unless given");
  auto* filter = run_cmd->add_option("--filter", run.filter, "run only experiments whose name matches this regex");
  auto* out = run_cmd->add_option("--out", run.out, "run directory (default: runs/<series>-<time>)");
  auto* device = run_cmd->add_option("--device", run.device, "run every experiment on this device")->check(CLI::IsMember({"cpu", "cuda"}));
  auto* axis = run_cmd->add_option("--axis", run.axes, "NAME=V1,V2,... (or range(a,b,step), pow2(a,b)): sweep this parameter over these "
                                   "values, in every experiment whose plugin has it; repeatable")
                   ->allow_extra_args(false);
  run_cmd->add_flag("--dry-run", run.dry_run, "list the experiments, one per sweep point, and run nothing");
  auto* shard = run_cmd->add_option("--shard", run.shard, "K/N: run only shard K (0 to N-1) of N; `expr merge` joins the shards' run directories");
  run_cmd->add_option("--resume", run.resume, "take up the run in this directory: run only its experiments without a result, "
                      "with the options it was started with")
      ->excludes(filter)
      ->excludes(out)
      ->excludes(device)
      ->excludes(axis)
      ->excludes(shard);

  std::filesystem::path validate_file;
  auto* validate_cmd = app.add_subcommand("validate", "check a series file and its expectations without running anything");
  validate_cmd->add_option("series", validate_file, "series file (YAML)")->required();
  std::vector<std::string> validate_axes;
  validate_cmd->add_option("--axis", validate_axes, "NAME=V1,V2,...: as for run")->allow_extra_args(false);

  std::vector<std::filesystem::path> list_dirs;
  auto* list_cmd = app.add_subcommand("list", "list the plugins found and their parameters");
  list_cmd->add_option("--plugin-path", list_dirs, "also look in these directories");

  std::filesystem::path show_dir;
  auto* show_cmd = app.add_subcommand("show", "print the report of a run; for one that stopped before its end, how to resume it");
  show_cmd->add_option("run_dir", show_dir, "run directory")->required();

  std::filesystem::path replay_dir;
  std::optional<std::filesystem::path> replay_series, replay_out;
  auto* replay_cmd = app.add_subcommand("replay", "judge expectations again from a run's recorded measurements and traces");
  replay_cmd->add_option("run_dir", replay_dir, "run directory (or recorded data) with results.json")->required();
  replay_cmd->add_option("--series", replay_series, "take the series' own expectations from this file instead");
  replay_cmd->add_option("--out", replay_out, "write results.json, reports and Chrome traces here");

  std::vector<std::filesystem::path> merge_dirs;
  std::filesystem::path merge_out;
  bool merge_mixed = false;
  auto* merge_cmd = app.add_subcommand("merge", "make one run directory from the run directories of a series' shards");
  merge_cmd->add_option("shard_dirs", merge_dirs, "the shards' run directories")->required();
  merge_cmd->add_option("--out", merge_out, "the merged run directory")->required();
  merge_cmd->add_flag("--allow-mixed", merge_mixed, "merge shards of different series or environments, and show the mix");

  expr::cli::SlurmArgs slurm;
  auto* slurm_cmd = app.add_subcommand("slurm", "run a series on Slurm: a job array of shards, then a job that merges them (docs/slurm.md)");
  slurm_cmd->add_option("series", slurm.series, "series file (YAML)")->required();
  slurm_cmd->add_option("--shards", slurm.shards, "N: the array's tasks, each running one shard K/N of the series")->required()->check(CLI::Range(1, 100000));
  slurm_cmd->add_option("--gpus-per-task", slurm.gpus_per_task, "G: GPUs each task asks Slurm for (default none)");
  slurm_cmd->add_option("--partition", slurm.partition, "the partition both jobs run in");
  slurm_cmd->add_option("--time", slurm.time, "the time limit of each task and of the merge job (Slurm's format: 30, 2:00:00, 1-0)");
  slurm_cmd->add_option("--account", slurm.account, "the account both jobs are charged to");
  slurm_cmd->add_option("--qos", slurm.qos, "the quality of service of both jobs");
  slurm_cmd->add_option("--constraint", slurm.constraint, "node features the array's tasks need (a GPU model, say)");
  slurm_cmd->add_option("--sbatch-line", slurm.sbatch_lines, "one more #SBATCH line for the array (--sbatch-line=--mem=64G); repeatable")
      ->allow_extra_args(false);
  slurm_cmd->add_option("--out", slurm.out, "the run root, on a filesystem every node sees (default: runs/<series>-<time>)");
  slurm_cmd->add_flag("--submit", slurm.submit, "submit both jobs with sbatch and print their ids, instead of printing the commands");

  auto* metrics_cmd = app.add_subcommand("metrics", "list what expectations can ask about");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : expr::cli::bad_input;
  }
  if (*run_cmd) {
    if (run.series.empty() && !run.resume) {
      fmt::print(stderr, "run: give a series file, or --resume RUN_DIR\nRun with --help for more information.\n");
      return expr::cli::bad_input;
    }
    return expr::cli::run(run);
  }
  if (*validate_cmd) return expr::cli::validate(validate_file, validate_axes);
  if (*list_cmd) return expr::cli::list(list_dirs);
  if (*show_cmd) return expr::cli::show(show_dir, argv[0]);
  if (*replay_cmd) return expr::cli::replay(replay_dir, replay_series, replay_out);
  if (*merge_cmd) return expr::cli::merge(merge_dirs, merge_out, merge_mixed);
  if (*slurm_cmd) return expr::cli::slurm(slurm);
  if (*metrics_cmd) return expr::cli::metrics();
  return expr::cli::bad_input;
}
