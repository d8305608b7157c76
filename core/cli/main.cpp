// expr: state what a GPU trace should show, run the experiment, see which guesses hold.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

namespace {

// The options of a gate, shared by compare, run --baseline, calibrate and history (whose steps are
// tested like a comparison, within one machine's runs).
void add_gate_options(CLI::App& command, expr::cli::GateArgs& gate, bool across_machines = true) {
  command.add_option("--threshold", gate.thresholds, "METRIC=FRACTION (gpu_time=3%): the smallest change that counts, over the series' gates; repeatable")
      ->allow_extra_args(false);
  command.add_option("--structure", gate.structure, "on|off: whether structural changes of the trace fail the gate (over the series' gates)")
      ->transform(CLI::IsMember(std::map<std::string, bool>{{"on", true}, {"off", false}}));
  command.add_option("--alpha", gate.alpha, "family-wise false-alarm rate of the timing tests (default 0.05)")->check(CLI::Range(1e-9, 0.5));
  if (across_machines)
    command.add_flag("--across-environments", gate.across_environments, "compare runs from different machines (GPU, driver, CUDA, CPU) anyway, loudly");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"expr: guess what the trace shows, run the experiment, see which guesses the trace confirms"};
  app.require_subcommand(1);

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
  run_cmd->add_option("--history", run.history, "record the run in this history database (default: $EXPR_HISTORY, else runs/history.sqlite)");
  run_cmd->add_flag("--no-history", run.no_history, "record nothing in the history");
  run_cmd->add_option("--baseline", run.baseline, "compare the finished run with this run directory or history reference (@last, @last~N, "
                      "@last-good, @ID) and exit with 5 on a regression");
  add_gate_options(*run_cmd, run.gate);

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

  expr::cli::HistoryArgs history;
  auto* history_cmd = app.add_subcommand("history", "list the runs recorded, or one experiment's timing over them");
  history_cmd->add_option("--history", history.history, "history database (default: $EXPR_HISTORY, else runs/history.sqlite)");
  history_cmd->add_option("--series", history.series, "only runs of this series");
  history_cmd->add_option("--experiment", history.experiment, "show this experiment's metric over the runs (its identity, e.g. sdpa[seq=2048])");
  history_cmd->add_option("--metric", history.metric, "with --experiment: gpu_time or host_time")->check(CLI::IsMember({"gpu_time", "host_time"}));
  history_cmd->add_option("--limit", history.limit, "at most this many runs, the newest");
  add_gate_options(*history_cmd, history.gate, false);

  expr::cli::CalibrateArgs calibrate;
  auto* calibrate_cmd = app.add_subcommand("calibrate", "run a series several times unchanged: the gate's false-alarm rate, each point's noise");
  calibrate_cmd->add_option("series", calibrate.run.series, "series file (YAML)")->required();
  calibrate_cmd->add_option("--runs", calibrate.runs, "how many runs (default 5)")->check(CLI::Range(2, 1000));
  calibrate_cmd->add_option("--filter", calibrate.run.filter, "calibrate only experiments whose name matches this regex");
  calibrate_cmd->add_option("--device", calibrate.run.device, "run every experiment on this device")->check(CLI::IsMember({"cpu", "cuda"}));
  calibrate_cmd->add_option("--axis", calibrate.run.axes, "NAME=V1,V2,...: as for run")->allow_extra_args(false);
  calibrate_cmd->add_option("--out", calibrate.run.out, "folder of the runs (default: runs/<series>-calibration-<time>)");
  calibrate_cmd->add_option("--history", calibrate.run.history, "history database (default: $EXPR_HISTORY, else runs/history.sqlite)");
  add_gate_options(*calibrate_cmd, calibrate.gate, false);

  expr::cli::CompareArgs compare;
  auto* compare_cmd = app.add_subcommand("compare", "compare a candidate run with a baseline: timings, structure of the trace, the gate's verdict");
  compare_cmd->add_option("base", compare.base, "the baseline: a run directory or a history reference (@last, @last~N, @last-good, @ID)")->required();
  compare_cmd->add_option("new", compare.candidate, "the candidate: a run directory or a history reference")->required();
  compare_cmd->add_option("--history", compare.history, "history database for references (default: $EXPR_HISTORY, else runs/history.sqlite)");
  compare_cmd->add_option("--series", compare.series, "the series, when both runs are references and the history holds several");
  compare_cmd->add_option("--markdown", compare.markdown, "also write the comparison as Markdown to this file");
  add_gate_options(*compare_cmd, compare.gate);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : expr::cli::bad_input;
  }
  if (*run_cmd) return expr::cli::run(run);
  if (*validate_cmd) return expr::cli::validate(validate_file, validate_axes);
  if (*list_cmd) return expr::cli::list(list_dirs);
  if (*show_cmd) return expr::cli::show(show_dir);
  if (*replay_cmd) return expr::cli::replay(replay_dir, replay_series, replay_out);
  if (*metrics_cmd) return expr::cli::metrics();
  if (*compare_cmd) return expr::cli::compare(compare);
  if (*calibrate_cmd) return expr::cli::calibrate(calibrate);
  if (*history_cmd) return expr::cli::history(history);
  return expr::cli::bad_input;
}
