// expr: state what a GPU trace should show, run the experiment, see which guesses hold.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "cli/commands.hpp"
#include "report/run_result.hpp"
#include "session/comparison.hpp"
#include "report/summary.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace {

namespace fs = std::filesystem;

// `--plugin-path DIR` (repeatable), alike on every command that looks for plugins.
void add_plugin_path_option(CLI::App& command, std::vector<fs::path>& dirs) {
  command.add_option("--plugin-path", dirs, "also look for plugins in this directory, before $EXPR_PLUGIN_PATH; repeatable")
      ->allow_extra_args(false);
}

// Commands other than `list` hand --plugin-path to the search through $EXPR_PLUGIN_PATH, so that
// every process the command starts (workers, Slurm jobs) searches the same directories.
void export_plugin_path(const std::vector<fs::path>& dirs) {
  if (dirs.empty()) return;
  std::string value;
  for (const auto& d : dirs) value += (value.empty() ? "" : ":") + fs::absolute(d).string();
  if (const char* earlier = std::getenv("EXPR_PLUGIN_PATH"); earlier && *earlier) value += std::string(":") + earlier;
  ::setenv("EXPR_PLUGIN_PATH", value.c_str(), 1);
}

// "--out" for each long option of `command`.
std::vector<std::string> long_options(const CLI::App& command) {
  std::vector<std::string> names;
  for (const auto* o : command.get_options())
    for (const auto& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

// Whether `a` is `b` with two neighbouring characters swapped ("rnu", "run").
bool swapped(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  const auto i = static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin());
  return i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i] && a.substr(i + 2) == b.substr(i + 2);
}

// "; did you mean 'run'?" for a mistyped command or option: first a name with two neighbouring
// characters swapped (rnu), or one that the word begins with or that begins with it (--output,
// --dry), then the closest by edit distance.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (swapped(word, n) || word.starts_with(n) || n.starts_with(word)) return "; did you mean '" + n + "'?";
  return expr::util::did_you_mean(word, names);
}

// On a command line CLI11 refused: the first command or long option expr does not know, with the
// closest one it does ("did you mean"), or "" when every word is known and CLI11's message says it.
std::string unknown_word(CLI::App& app, int argc, char** argv) {
  CLI::App* command = &app;
  std::string path = "expr";
  bool value_follows = false;  // the previous word was an option that takes a value
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.starts_with("--")) {
      const auto name = word.substr(0, word.find('='));
      const auto* option = command->get_option_no_throw(name);
      if (!option) option = app.get_option_no_throw(name);
      if (!option) {
        auto names = long_options(*command);
        if (command != &app)
          for (auto& n : long_options(app)) names.push_back(n);
        return fmt::format("{}: unknown option {}{}\nRun `{} --help` for its options and examples.", path, name,
                           did_you_mean(name, names), path);
      }
      value_follows = word.find('=') == std::string::npos && option->get_type_size_max() > 0 && !option->get_positional();
      continue;
    }
    if (word.starts_with("-") || value_follows) {
      value_follows = false;
      continue;
    }
    const auto commands = command->get_subcommands([](CLI::App* c) { return !c->get_name().empty(); });
    if (commands.empty()) continue;  // a positional argument of the command
    const auto next = std::find_if(commands.begin(), commands.end(), [&](CLI::App* c) { return c->check_name(word); });
    if (next != commands.end()) {
      command = *next;
      path += " " + word;
      continue;
    }
    std::vector<std::string> names;
    for (const auto* c : commands) names.push_back(c->get_name());
    return fmt::format("{}: '{}' is not a command{}\nRun `{} --help` for the commands.", path, word, did_you_mean(word, names), path);
  }
  return "";
}

// The options of a gate, shared by compare, run --baseline, calibrate and history (whose steps are
// tested like a comparison, within one machine's runs).
void add_gate_options(CLI::App& command, expr::session::GateArgs& gate, bool across_machines = true) {
  command.add_option("--threshold", gate.thresholds, "METRIC=FRACTION (gpu_time=3%): the smallest change that counts, over the series' gates; repeatable")
      ->allow_extra_args(false)
      ->check(CLI::Validator(
          [](const std::string& option) {
            try {
              expr::session::parse_threshold(option);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          },
          "METRIC=FRACTION"));
  command.add_option("--structure", gate.structure, "on|off: whether structural changes of the trace fail the gate (over the series' gates)")
      ->transform(CLI::IsMember(std::map<std::string, bool>{{"on", true}, {"off", false}}));
  command.add_option("--alpha", gate.alpha, "family-wise false-alarm rate of the timing tests (default 0.05)")->check(CLI::Range(1e-9, 0.5));
  if (across_machines)
    command.add_flag("--across-environments", gate.across_environments, "compare runs from different machines (GPU, driver, CUDA, CPU) anyway, loudly");
}

// What the command line fills: every command's options.
struct Options {
  std::vector<fs::path> plugin_dirs;
  std::string log_level = "warning";
  expr::session::RunArgs run;
  fs::path validate_file;
  std::vector<std::string> validate_axes;
  fs::path show_dir;
  bool show_all = false;
  expr::session::ReplayArgs replay;
  expr::session::MergeArgs merge;
  expr::session::SlurmArgs slurm;
  std::string new_name;
  std::optional<fs::path> new_dir;
  bool torch = false, cuda = false;
  std::optional<std::string> series_plugin;
  expr::session::HistoryArgs history;
  expr::session::CalibrateArgs calibrate;
  expr::session::CompareArgs compare;
  expr::session::AcrossArgs across;
};

// A command of the command line and what it runs once its options are parsed.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

void add_global_options(CLI::App& app, Options& o) {
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("expr {} (revision {})", expr::report::expr_version(), expr::report::expr_revision()));
  app.footer("Examples:\n"
             "  expr run experiments/series3.yaml                 # profile a series, judge its guesses\n"
             "  expr replay tests/data/series3-h200 --out /tmp/s3  # judge a recorded run again, no GPU needed\n"
             "  expr run SERIES.yaml --baseline @last-good        # gate against the last good run: exit 5 on a regression\n"
             "  expr new plugin NAME --torch                      # start a plugin project\n"
             "`expr COMMAND --help` shows each command's options and examples; docs/README.md lists the documentation.");
  // Before or after the subcommand: `expr run x.yaml --log-level debug` works too.
  app.fallthrough();
  app.add_option("--log-level", o.log_level,
                 "what the terminal shows of expr's own log: trace, debug, info, warning (default) or error; "
                 "the run directory's expr.log keeps debug and up")
      ->envname("EXPR_LOG")
      ->check(CLI::IsMember(std::vector<std::string>(expr::log::level_names.begin(), expr::log::level_names.end())));
}

Command add_run(CLI::App& app, Options& o, const char* program) {
  auto& run = o.run;
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
  run_cmd->add_option("--gpus", run.gpus, "all, N or I,J,...: run experiments at once, one worker per GPU, each worker seeing only its GPU "
                      "(with CPU experiments only and no GPU: N workers)");
  auto* rounds = run_cmd->add_option("--rounds", run.rounds, "time every experiment in this many worker processes (default: the series' "
                                     "iterations: rounds, else 3); comparisons take the noise between them into account")
                     ->check(CLI::Range(1, 100));
  auto* force = run_cmd->add_flag("--force", run.force, "--out may hold an earlier run: replace it (its results, reports and experiment folders)");
  run_cmd->add_option("--resume", run.resume, "take up the run in this directory: run only its experiments without a result, "
                      "with the options it was started with")
      ->excludes(filter)
      ->excludes(out)
      ->excludes(device)
      ->excludes(axis)
      ->excludes(shard)
      ->excludes(rounds)
      ->excludes(force);
  run_cmd->add_option("--history", run.history, "record the run in this history database (default: $EXPR_HISTORY, else runs/history.sqlite)");
  run_cmd->add_flag("--no-history", run.no_history, "record nothing in the history");
  run_cmd->add_option("--baseline", run.baseline, "compare the finished run with this run directory or history reference (@last, @last~N, "
                      "@last-good, @ID) and exit with 5 on a regression");
  add_gate_options(*run_cmd, run.gate);
  add_plugin_path_option(*run_cmd, o.plugin_dirs);
  run_cmd->footer("Examples:\n"
                  "  expr run experiments/series3.yaml\n"
                  "  expr run tests/series/cpu.yaml --out /tmp/cpu --force\n"
                  "  expr run experiments/attention-sweep.yaml --axis seq=1024,4096 --filter 'flash\\[dtype=bf16'\n"
                  "  expr run SERIES.yaml --baseline @last-good      # exit 5 on a regression (docs/nightly.md)\n"
                  "  expr run --resume runs/series3-20261201-010000  # take up a run that stopped");
  return {run_cmd, [&run, program] {
            if (run.series.empty() && !run.resume) {
              fmt::print(stderr, "run: give a series file, or --resume RUN_DIR\nRun with --help for more information.\n");
              return static_cast<int>(expr::cli::bad_input);
            }
            run.program = program;
            return expr::cli::run(run);
          }};
}

// The commands that read a series or recorded runs: validate, list, show, replay, merge.
std::vector<Command> add_reading_commands(CLI::App& app, Options& o, const char* program) {
  auto* validate_cmd = app.add_subcommand("validate", "check a series file and its guesses without running anything");
  validate_cmd->add_option("series", o.validate_file, "series file (YAML)")->required();
  validate_cmd->add_option("--axis", o.validate_axes, "NAME=V1,V2,...: as for run")->allow_extra_args(false);
  add_plugin_path_option(*validate_cmd, o.plugin_dirs);
  validate_cmd->footer("Examples:\n  expr validate experiments/series3.yaml\n  expr validate experiments/attention-sweep.yaml --axis 'seq=pow2(256,1024)'");

  auto* list_cmd = app.add_subcommand("list", "list the plugins found and their parameters");
  add_plugin_path_option(*list_cmd, o.plugin_dirs);
  list_cmd->footer("Examples:\n  expr list\n  expr list --plugin-path ~/my-plugins/build");

  auto* show_cmd = app.add_subcommand("show", "print the report of a run; for one that stopped before its end, how to resume it");
  show_cmd->add_option("run_dir", o.show_dir, "run directory")->required();
  show_cmd->add_flag("--all", o.show_all,
                     fmt::format("list every experiment; past {}, only those that need a look (failed, a guess not confirmed, a timing warning)",
                                 expr::report::listed_at_most));
  show_cmd->footer("Examples:\n  expr show runs/series3-20261201-010000\n  expr show tests/data/series3-h200\n  expr show --all runs/sweep-nightly");

  auto* replay_cmd = app.add_subcommand("replay", "judge the guesses again from a run's recorded measurements and traces");
  replay_cmd->add_option("run_dir", o.replay.run_dir, "run directory (or recorded data) with results.json")->required();
  replay_cmd->add_option("--series", o.replay.series, "take the series' own guesses from this file instead");
  replay_cmd->add_option("--out", o.replay.out, "write results.json, reports and Chrome traces here");
  replay_cmd->add_flag("--force", o.replay.force, "--out may hold an earlier run: replace it");
  replay_cmd->footer("Examples:\n  expr replay tests/data/series3-h200 --out /tmp/s3          # report.html and traces of a recorded run\n"
                     "  expr replay RUN_DIR --series edited.yaml --out /tmp/again   # judge new guesses against old traces");

  auto* merge_cmd = app.add_subcommand("merge", "make one run directory from the run directories of a series' shards");
  merge_cmd->add_option("shard_dirs", o.merge.shard_dirs, "the shards' run directories")->required();
  merge_cmd->add_option("--out", o.merge.out, "the merged run directory")->required();
  merge_cmd->add_flag("--force", o.merge.force, "--out may hold an earlier run: replace it");
  merge_cmd->add_flag("--allow-mixed", o.merge.allow_mixed, "merge shards of different series or environments, and show the mix");
  merge_cmd->footer("Example:\n  expr merge runs/sweep/shard-0 runs/sweep/shard-1 --out runs/sweep/merged");

  return {{validate_cmd, [&o] { return expr::cli::validate(o.validate_file, o.validate_axes); }},
          {list_cmd, [&o] { return expr::cli::list(o.plugin_dirs); }},
          {show_cmd, [&o, program] { return expr::cli::show(o.show_dir, program, o.show_all); }},
          {replay_cmd, [&o, program] { return expr::cli::replay(o.replay, program); }},
          {merge_cmd, [&o] { return expr::cli::merge(o.merge); }}};
}

Command add_slurm(CLI::App& app, expr::session::SlurmArgs& slurm) {
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
  slurm_cmd->footer("Examples:\n  expr slurm experiments/attention-sweep.yaml --shards 8 --gpus-per-task 1 --out /shared/sweep\n"
                    "  expr slurm experiments/attention-sweep.yaml --shards 8 --gpus-per-task 1 --out /shared/sweep --submit");
  return {slurm_cmd, [&slurm] { return expr::cli::slurm(slurm); }};
}

// `expr metrics`, and `expr new plugin` and `expr new series`.
std::vector<Command> add_writing_commands(CLI::App& app, Options& o) {
  auto* metrics_cmd = app.add_subcommand("metrics", "list what guesses can ask about");
  metrics_cmd->footer("Example:\n  expr metrics | grep -i occupancy");

  auto* new_cmd = app.add_subcommand("new", "write a new plugin project or series file");
  new_cmd->require_subcommand(1);
  auto* new_plugin_cmd = new_cmd->add_subcommand("plugin", "a plugin project that builds against the installed expr and runs as it stands");
  new_plugin_cmd->add_option("name", o.new_name, "the plugin's name (letters, digits, _)")->required();
  auto* torch_flag = new_plugin_cmd->add_flag("--torch", o.torch, "a LibTorch plugin (links expr::torch)");
  new_plugin_cmd->add_flag("--cuda", o.cuda, "a plugin with its own CUDA kernel")->excludes(torch_flag);
  new_plugin_cmd->add_option("--dir", o.new_dir, "where to write the project (default: ./NAME)");
  auto* new_series_cmd = new_cmd->add_subcommand("series", "a commented series file NAME.yaml");
  new_series_cmd->add_option("name", o.new_name, "the series' name (letters, digits, _)")->required();
  new_series_cmd->add_option("--plugin", o.series_plugin, "the plugin its experiment runs (default: NAME, else the first found)");
  new_series_cmd->add_option("--dir", o.new_dir, "where to write it (default: .)");
  add_plugin_path_option(*new_series_cmd, o.plugin_dirs);
  new_plugin_cmd->footer("Examples:\n  expr new plugin saxpy              # plain C++ on the CPU\n  expr new plugin linear --torch     # a LibTorch Linear layer\n"
                         "  expr new plugin mykernel --cuda    # a CUDA kernel of your own");
  new_series_cmd->footer("Example:\n  expr new series attention --plugin sdpa");
  new_cmd->footer("Examples:\n  expr new plugin linear --torch\n  expr new series attention --plugin sdpa");

  using expr::cli::PluginKind;
  return {{metrics_cmd, [] { return expr::cli::metrics(); }},
          {new_plugin_cmd,
           [&o] { return expr::cli::new_plugin(o.new_name, o.torch ? PluginKind::torch : o.cuda ? PluginKind::cuda : PluginKind::cpu, o.new_dir); }},
          {new_series_cmd, [&o] { return expr::cli::new_series(o.new_name, o.series_plugin, o.new_dir); }}};
}

Command add_across(CLI::App& app, expr::session::AcrossArgs& across) {
  auto* across_cmd = app.add_subcommand("across", "runs of one series from several machines side by side: each guess's verdict and each experiment's figures per run");
  across_cmd->add_option("runs", across.runs, "run directories or history references (@last:H200, @last-good:EPYC, @ID, @each-machine)")->required();
  across_cmd->add_option("--history", across.history, "history database for references (default: $EXPR_HISTORY, else runs/history.sqlite)");
  across_cmd->add_option("--series", across.series, "the series, when every run is a reference and the history holds several");
  across_cmd->add_option("--reference", across.reference, "the run that ratios are taken to, counting from 1 in the order given (default 1)")
      ->check(CLI::PositiveNumber);
  across_cmd->add_option("--json", across.json, "also write the view as JSON (schema expr.across/1) to this file");
  across_cmd->add_option("--html", across.html, "also write the view as a page with plots to this file");
  across_cmd->footer("Examples:\n  expr across runs/series3-a100 runs/series3-h200 --html across.html\n  expr across @each-machine --series series3\n"
                     "  expr across @last:H100 @last:H200 --reference 2\nRuns of different series are refused (exit 2).");
  return {across_cmd, [&across] { return expr::cli::across(across); }};
}

// The commands about the history and comparisons: history, calibrate, compare, across.
std::vector<Command> add_history_commands(CLI::App& app, Options& o) {
  auto& history = o.history;
  auto* history_cmd = app.add_subcommand("history", "list the runs recorded, or one experiment's timing over them");
  history_cmd->add_option("--history", history.history, "history database (default: $EXPR_HISTORY, else runs/history.sqlite)");
  history_cmd->add_option("--series", history.series, "only runs of this series");
  history_cmd->add_option("--experiment", history.experiment, "show this experiment's metric over the runs (its identity, e.g. sdpa[seq=2048])");
  history_cmd->add_option("--metric", history.metric, "with --experiment: gpu_time or host_time")->check(CLI::IsMember({"gpu_time", "host_time"}));
  history_cmd->add_option("--limit", history.limit, "at most this many runs, the newest");
  add_gate_options(*history_cmd, history.gate, false);
  history_cmd->footer("Examples:\n  expr history --series series3\n  expr history --experiment sdpa_flash --metric gpu_time");

  auto& calibrate = o.calibrate;
  auto* calibrate_cmd = app.add_subcommand("calibrate", "run a series several times unchanged: the gate's false-alarm rate, each point's noise");
  calibrate_cmd->add_option("series", calibrate.run.series, "series file (YAML)")->required();
  calibrate_cmd->add_option("--runs", calibrate.runs, "how many runs (default 5)")->check(CLI::Range(2, 1000));
  calibrate_cmd->add_option("--filter", calibrate.run.filter, "calibrate only experiments whose name matches this regex");
  calibrate_cmd->add_option("--device", calibrate.run.device, "run every experiment on this device")->check(CLI::IsMember({"cpu", "cuda"}));
  calibrate_cmd->add_option("--axis", calibrate.run.axes, "NAME=V1,V2,...: as for run")->allow_extra_args(false);
  calibrate_cmd->add_option("--out", calibrate.run.out, "folder of the runs (default: runs/<series>-calibration-<time>)");
  calibrate_cmd->add_option("--history", calibrate.run.history, "history database (default: $EXPR_HISTORY, else runs/history.sqlite)");
  add_gate_options(*calibrate_cmd, calibrate.gate, false);
  add_plugin_path_option(*calibrate_cmd, o.plugin_dirs);
  calibrate_cmd->footer("Example:\n  expr calibrate experiments/series3.yaml --runs 5   # then runs and gates carry each point's noise");

  auto& compare = o.compare;
  auto* compare_cmd = app.add_subcommand("compare", "compare a candidate run with a baseline: timings, structure of the trace, the gate's verdict");
  compare_cmd->add_option("base", compare.base, "the baseline: a run directory or a history reference (@last, @last~N, @last-good, @ID)")->required();
  compare_cmd->add_option("new", compare.candidate, "the candidate: a run directory or a history reference")->required();
  compare_cmd->add_option("--history", compare.history, "history database for references (default: $EXPR_HISTORY, else runs/history.sqlite)");
  compare_cmd->add_option("--series", compare.series, "the series, when both runs are references and the history holds several");
  compare_cmd->add_option("--markdown", compare.markdown, "also write the comparison as Markdown to this file");
  compare_cmd->add_option("--html", compare.html, "also write the comparison as a page that opens offline to this file");
  add_gate_options(*compare_cmd, compare.gate);
  compare_cmd->footer("Examples:\n  expr compare runs/series3-a runs/series3-b\n  expr compare @last-good @last --markdown comparison.md --html comparison.html\n"
                      "Runs of different series, or with no experiment in common, are refused (exit 2); exit 5 is a regression.");

  return {{history_cmd, [&history] { return expr::cli::history(history); }},
          {calibrate_cmd, [&calibrate] { return expr::cli::calibrate(calibrate); }},
          {compare_cmd, [&compare] { return expr::cli::compare(compare); }},
          add_across(app, o.across)};
}

// CLI11's verdict on the command line: nothing when it parsed, else the exit code, having said
// what is wrong (with the closest known command or option) or printed the help asked for.
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0)
      if (const auto message = unknown_word(app, argc, argv); !message.empty()) {
        fmt::print(stderr, "{}\n", message);
        return expr::cli::bad_input;
      }
    const int code = app.exit(e);
    return code == 0 ? 0 : expr::cli::bad_input;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"expr: guess what the trace shows, run the experiment, see which guesses the trace confirms"};
  Options o;
  add_global_options(app, o);
  std::vector<Command> commands{add_run(app, o, argv[0])};
  for (auto& c : add_reading_commands(app, o, argv[0])) commands.push_back(std::move(c));
  commands.push_back(add_slurm(app, o.slurm));
  for (auto& c : add_writing_commands(app, o)) commands.push_back(std::move(c));
  for (auto& c : add_history_commands(app, o)) commands.push_back(std::move(c));
  // Built without CUDA, the commands that run experiments stay, to say that they cannot.
  if (!expr::cli::has_runner)
    for (const auto* name : {"run", "slurm", "calibrate"}) {
      auto* command = app.get_subcommand(name);
      command->description(command->get_description() + " (not in this build: built without CUDA)");
    }
  if (const auto refused = parse(app, argc, argv)) return *refused;
  expr::log::set_terminal_level(*expr::log::level_from(o.log_level));
  if (!*app.get_subcommand("list")) export_plugin_path(o.plugin_dirs);
  for (const auto& c : commands)
    if (*c.app) return expr::cli::guarded(c.run);
  return expr::cli::bad_input;
}
