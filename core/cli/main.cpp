// expr: state what a GPU trace should show, run the experiment, see which guesses hold.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "util/log.hpp"

int main(int argc, char** argv) {
  CLI::App app{"expr: guess what the trace shows, run the experiment, see which guesses the trace confirms"};
  app.require_subcommand(1);
  // Before or after the subcommand: `expr run x.yaml --log-level debug` works too.
  app.fallthrough();
  std::string log_level = "warning";
  app.add_option("--log-level", log_level,
                 "what the terminal shows of expr's own log: trace, debug, info, warning (default) or error; "
                 "the run directory's expr.log keeps debug and up")
      ->envname("EXPR_LOG")
      ->check(CLI::IsMember(std::vector<std::string>(expr::log::level_names.begin(), expr::log::level_names.end())));

  expr::cli::RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "run a series: time, trace and check every experiment");
  run_cmd->add_option("series", run.series, "series file (YAML)")->required();
  run_cmd->add_option("--filter", run.filter, "run only experiments whose name matches this regex");
  run_cmd->add_option("--out", run.out, "run directory (default: runs/<series>-<time>)");
  run_cmd->add_option("--device", run.device, "run every experiment on this device")->check(CLI::IsMember({"cpu", "cuda"}));
  run_cmd->add_option("--axis", run.axes, "NAME=V1,V2,... (or range(a,b,step), pow2(a,b)): sweep this parameter over these values, "
                      "in every experiment whose plugin has it; repeatable")
      ->allow_extra_args(false);
  run_cmd->add_flag("--dry-run", run.dry_run, "list the experiments, one per sweep point, and run nothing");

  std::filesystem::path validate_file;
  auto* validate_cmd = app.add_subcommand("validate", "check a series file and its expectations without running anything");
  validate_cmd->add_option("series", validate_file, "series file (YAML)")->required();
  std::vector<std::string> validate_axes;
  validate_cmd->add_option("--axis", validate_axes, "NAME=V1,V2,...: as for run")->allow_extra_args(false);

  std::vector<std::filesystem::path> list_dirs;
  auto* list_cmd = app.add_subcommand("list", "list the plugins found and their parameters");
  list_cmd->add_option("--plugin-path", list_dirs, "also look in these directories");

  std::filesystem::path show_dir;
  auto* show_cmd = app.add_subcommand("show", "print the report of a finished run");
  show_cmd->add_option("run_dir", show_dir, "run directory")->required();

  std::filesystem::path replay_dir;
  std::optional<std::filesystem::path> replay_series, replay_out;
  auto* replay_cmd = app.add_subcommand("replay", "judge expectations again from a run's recorded measurements and traces");
  replay_cmd->add_option("run_dir", replay_dir, "run directory (or recorded data) with results.json")->required();
  replay_cmd->add_option("--series", replay_series, "take the series' own expectations from this file instead");
  replay_cmd->add_option("--out", replay_out, "write results.json, reports and Chrome traces here");

  auto* metrics_cmd = app.add_subcommand("metrics", "list what expectations can ask about");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : expr::cli::bad_input;
  }
  expr::log::set_terminal_level(*expr::log::level_from(log_level));
  if (*run_cmd) return expr::cli::run(run);
  if (*validate_cmd) return expr::cli::validate(validate_file, validate_axes);
  if (*list_cmd) return expr::cli::list(list_dirs);
  if (*show_cmd) return expr::cli::show(show_dir);
  if (*replay_cmd) return expr::cli::replay(replay_dir, replay_series, replay_out);
  if (*metrics_cmd) return expr::cli::metrics();
  return expr::cli::bad_input;
}
