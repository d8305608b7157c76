// The subcommands other than run: validate, list, show, replay and metrics.
#include "cli/commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "analysis/metrics.hpp"
#include "report/assembler.hpp"
#include "report/resume.hpp"
#include "report/run_directory.hpp"
#include "report/sinks.hpp"
#include "report/summary.hpp"
#include "util/log.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

ExitCode outcome_code(const report::Tally& t) {
  if (t.experiments_failed > 0 || t.experiments_interrupted > 0) return experiment_failed;
  if (t.required_failed > 0) return required_guess_failed;
  return ok;
}

namespace {

// Each family's sweep guesses, checked against the axes of its points; adds what is wrong to `problems`.
std::vector<expect::CompiledSweepGuess> compile_sweep_guesses(const std::vector<std::pair<std::string, series::GuessSpec>>& specs,
                                                      const std::vector<report::PlannedPoint>& points, std::vector<util::Problem>& problems) {
  std::vector<std::string> families;
  for (const auto& p : points)
    if (std::find(families.begin(), families.end(), p.family) == families.end()) families.push_back(p.family);
  std::vector<expect::CompiledSweepGuess> out;
  for (const auto& [family, spec] : specs) {
    std::vector<std::string> axes;
    const auto first = std::find_if(points.begin(), points.end(), [&family = family](const auto& p) { return p.family == family; });
    if (first != points.end())
      for (const auto& [axis, value] : first->point) axes.push_back(axis);
    if (auto g = expect::compile_sweep_guess(spec, family, axes, families, problems)) out.push_back(std::move(*g));
  }
  return out;
}

}  // namespace

std::optional<LoadedSeries> load_series(const fs::path& file, const std::vector<std::string>& axes) {
  std::vector<series::AxisOverride> overrides;
  for (const auto& option : axes) {
    try {
      overrides.push_back(series::parse_axis_override(option));
    } catch (const std::invalid_argument& e) {
      log::error("{}", e.what());
      return std::nullopt;
    }
  }
  try {
    const auto s = series::read(file);
    loader::PluginCatalog catalog(loader::search_path(s.plugin_path, loader::Origin::plugin_path));
    auto plan = series::plan(s, catalog, overrides);
    auto guesses = expect::compile_guesses(plan);
    std::vector<report::PlannedPoint> points;
    for (const auto& e : plan.experiments) points.push_back({e.name, e.family, e.point});
    std::vector<util::Problem> problems;
    auto sweep_guesses = compile_sweep_guesses(plan.sweep_guesses, points, problems);
    if (!problems.empty()) throw util::InputError(std::move(problems));
    return LoadedSeries{std::move(plan), std::move(guesses), std::move(sweep_guesses), std::nullopt};
  } catch (const util::InputError& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "{}\n", p.str());
    fmt::print(stderr, "{} problem{} in {}; nothing ran\n", e.problems().size(), e.problems().size() == 1 ? "" : "s", file.string());
    return std::nullopt;
  }
}

void print_expansion(const series::Plan& plan) {
  for (const auto& e : plan.experiments) fmt::print("  {}\n", e.name);
  fmt::print("{} experiment{}\n", plan.experiments.size(), plan.experiments.size() == 1 ? "" : "s");
}

int validate(const fs::path& file, const std::vector<std::string>& axes) {
  const auto loaded = load_series(file, axes);
  if (!loaded) return bad_input;
  std::size_t guesses = 0;
  for (const auto& g : loaded->guesses) guesses += g.size();
  guesses += loaded->sweep_guesses.size();
  print_expansion(loaded->plan);
  fmt::print("{}: series {} is valid: {} experiments, {} guesses\n", file.string(), loaded->plan.name, loaded->plan.experiments.size(),
             guesses);
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
  loader::PluginCatalog catalog(loader::search_path(extra_dirs, loader::Origin::option));
  const auto found = catalog.available();
  if (found.empty()) {
    fmt::print("no plugins found in:\n");
    for (const auto& d : catalog.dirs()) fmt::print("  {} ({})\n", d.path.string(), loader::to_string(d.origin));
    return ok;
  }
  int status = ok;
  for (const auto& [name, places] : found) {
    try {
      if (places.size() > 1) throw loader::LoadError(loader::PluginCatalog::ambiguity(name, places));
      const auto lib = catalog.find(name);
      const auto& d = lib->description();
      std::vector<std::string> devices;
      for (auto dev : d.devices) devices.push_back(dev == Device::cuda ? "cuda" : "cpu");
      fmt::print("{} — {}\n  file: {} ({})\n  devices: {}\n", d.name, d.summary, places.front().file.string(),
                 loader::to_string(places.front().origin), fmt::format("{}", fmt::join(devices, ", ")));
      for (const auto& p : d.params) {
        fmt::print("  {} ({}, default {}){}: {}\n", p.name, type_name(p.type), series::to_string(p.default_value),
                   p.choices.empty() ? "" : fmt::format(" one of {}", fmt::join(p.choices, "|")), p.doc);
      }
    } catch (const loader::LoadError& e) {
      log::error("{}", e.what());
      status = bad_input;
    }
  }
  return status;
}

std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string resume_command(const std::string& program, const fs::path& run_dir) {
  return fmt::format("{} run --resume {}", shell_word(program), shell_word(run_dir.string()));
}

std::optional<report::RunLock> open_run_directory(const report::RunDirectory& dir, bool force, int& refused) {
  if (dir.root().empty()) {
    log::error("--out '' names no directory; name one");
    refused = bad_input;
    return std::nullopt;
  }
  try {
    return dir.create(force);
  } catch (const report::RunDirectoryRefused& e) {
    log::error("{}", e.what());
    refused = e.why == report::RunDirectoryRefused::Why::holds_run ? bad_input : cannot_write;
    return std::nullopt;
  }
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

int show(const fs::path& run_dir, const std::string& program, bool all) {
  try {
    const report::RunDirectory dir(run_dir);
    const auto run = dir.read();
    fmt::print("{}", report::terminal_report(run, ::isatty(STDOUT_FILENO), all ? run.experiments.size() : report::listed_at_most));
    const auto with_result = std::count_if(run.experiments.begin(), run.experiments.end(),
                                           [](const auto& e) { return report::has_result(e.measurement); });
    // A run that ended has finished set; one that stopped before (kill -9, a reboot), or is still
    // going, has not. An interrupted run ended, but not all its experiments did. A merged run is
    // completed in its shards, then merged again.
    if (!run.merged.empty()) {
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
    } else if (!run.interrupted.empty())
      fmt::print("\nincomplete: the run was interrupted ({}); {} of {} planned experiments did not finish. This runs them:\n  {}\n",
                 run.interrupted, report::tally(run).experiments_interrupted + run.planned - std::min(run.planned, run.experiments.size()),
                 run.planned, resume_command(program, run_dir));
    else if (run.finished.empty())
      fmt::print("\nincomplete: the run has not ended; {} of {} planned experiments have a result. If it stopped, this runs the "
                 "others:\n  {}\n",
                 with_result, run.planned, resume_command(program, run_dir));
    const auto self = shell_word(run_dir.string());
    const auto series_file = run.series_file.empty() ? std::string("SERIES.yaml") : shell_word(run.series_file);
    print_ending(dir, {{fmt::format("{} run {} --baseline {}", shell_word(program), series_file, self), "run the series again, gated against this run"},
                       {fmt::format("{} compare {} OTHER_RUN_DIR", shell_word(program), self), "another run of " + run.series + " against this one"},
                       {fmt::format("{} replay {} --series EDITED.yaml --out DIR", shell_word(program), self),
                        "judge edited guesses against these traces"}});
    return ok;
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return bad_input;
  }
}

// The series' own guesses (those about points and those about whole sweeps) replaced by those of
// `series_file` when one is given.
RecordedGuesses recorded_guesses(const report::RunResult& recorded, const std::vector<report::PlannedPoint>& planned,
                                 const std::optional<fs::path>& series_file) {
  std::vector<std::string> names;  // families, as guesses name them
  for (const auto& p : planned)
    if (std::find(names.begin(), names.end(), p.family) == names.end()) names.push_back(p.family);
  std::vector<util::Problem> problems;
  std::optional<series::Series> s;
  if (series_file) s = series::read(*series_file);

  // The series' own guesses first, then the plugin's, as a run orders them.
  RecordedGuesses out;
  const auto add = [&](const std::string& experiment, const series::GuessSpec& spec, std::string_view context) {
    if (auto g = expect::compile_guess(spec, names, context, problems)) out.points[experiment].push_back(std::move(*g));
  };
  std::vector<std::pair<std::string, series::GuessSpec>> sweep_specs;
  if (s)
    for (const auto& x : s->experiments) {
      if (std::find(names.begin(), names.end(), x.name.value) == names.end()) {
        problems.push_back({x.name.pos, fmt::format("experiment {} is not in the recorded run", x.name.value)});
        continue;
      }
      for (const auto& e : recorded.experiments)
        if (e.family == x.name.value)
          for (const auto& spec : x.guesses) add(e.measurement.experiment, spec, "");
      for (const auto& spec : x.sweep_guesses) sweep_specs.emplace_back(x.name.value, spec);
    }
  // A recorded guess is detached (report/run_directory.cpp): reported where it was recorded.
  for (const auto& e : recorded.experiments)
    for (const auto& g : e.guesses)
      if (!s || g.spec.origin == series::GuessOrigin::plugin) add(e.measurement.experiment, g.spec, fmt::format("{}: the recorded guess: ", e.measurement.experiment));
  // results.json holds a sweep guess once per group it was judged for.
  if (!s)
    for (const auto& v : recorded.sweep_guesses)
      if (std::none_of(sweep_specs.begin(), sweep_specs.end(), [&](const auto& f) {
            return f.first == v.family && f.second.check == v.guess.spec.check && f.second.pos().str() == v.guess.spec.pos().str();
          }))
        sweep_specs.emplace_back(v.family, v.guess.spec);
  out.sweeps = compile_sweep_guesses(sweep_specs, planned, problems);
  if (!problems.empty()) throw util::InputError(std::move(problems));
  return out;
}

bool out_is_input(const fs::path& out, const fs::path& input, std::string_view what) {
  std::error_code ec;
  if (!fs::equivalent(out, input, ec)) return false;
  log::error("--out {} is {} itself{}; write into another directory", out.string(), what, out == input ? "" : " (" + input.string() + ")");
  return true;
}

ExitCode judge_again(report::RunResult& run, report::RunResult recorded, RecordedGuesses guesses, std::vector<report::PlannedPoint> planned,
                     const std::optional<fs::path>& out, bool force, std::string_view story) {
  report::Multiplex outputs;
  std::optional<report::RunLock> lock;
  if (out) {
    const report::RunDirectory dir(*out);
    int refused = 0;
    lock = open_run_directory(dir, force, refused);
    if (!lock) return static_cast<ExitCode>(refused);
    try {
      log::open_file(dir.log());
    } catch (const std::exception& e) {
      log::error("{}", e.what());
      return cannot_write;
    }
    outputs.add(report::sinks::native_traces(dir));
    outputs.add(report::sinks::chrome_traces(dir));
    outputs.add(report::sinks::results_json(dir));
    outputs.add(report::sinks::markdown_summary(dir));
    outputs.add(report::sinks::junit(dir));
    outputs.add(report::sinks::html_report(dir));
  }
  log::info("{}", story);
  outputs.add(report::sinks::run_log());
  outputs.add(report::sinks::terminal_report());
  report::Assembler assembler(run, outputs);
  assembler.set_planned(std::move(planned));
  assembler.set_sweep_guesses(std::move(guesses.sweeps));
  try {
    outputs.begin(run);
    for (auto& e : recorded.experiments) {
      const auto name = e.measurement.experiment;
      assembler.add({std::move(e.measurement), std::move(guesses.points[name]), std::move(e.family), std::move(e.point)});
    }
    assembler.finish();
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return cannot_write;
  }
  return outcome_code(report::tally(run));
}

int replay(const fs::path& run_dir, const std::optional<fs::path>& series_file, const std::optional<fs::path>& out, bool force,
           const std::string& program) {
  report::RunResult recorded;
  RecordedGuesses guesses;
  std::vector<report::PlannedPoint> planned;
  try {
    recorded = report::RunDirectory(run_dir).read();
    for (const auto& e : recorded.experiments) planned.push_back({e.measurement.experiment, e.family, e.point});
    // The recorded traces are read now, so that a damaged one is bad input, not a failure to write.
    for (const auto& e : recorded.experiments) {
      if (e.measurement.trace) e.measurement.trace->record_count();
      if (e.measurement.cold && e.measurement.cold->trace) e.measurement.cold->trace->record_count();
    }
    guesses = recorded_guesses(recorded, planned, series_file);
  } catch (const util::InputError& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "{}\n", p.str());
    return bad_input;
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return bad_input;
  }

  report::RunResult run;
  run.id = report::new_run_id();
  run.revision = report::expr_revision();
  run.series = recorded.series;
  run.series_file = series_file ? series_file->string() : recorded.series_file;
  run.description = recorded.description;
  run.environment = recorded.environment;
  run.started = recorded.started;
  run.finished = recorded.finished;
  run.interrupted = recorded.interrupted;
  run.planned = recorded.experiments.size();
  run.run_dir = out.value_or(run_dir);
  if (out && out_is_input(*out, run_dir, "the recorded run")) return bad_input;
  const auto code = judge_again(run, std::move(recorded), std::move(guesses), std::move(planned), out, force,
                                fmt::format("replaying {}{}", run_dir.string(), series_file ? " with the guesses of " + series_file->string() : ""));
  if (out && code != bad_input && code != cannot_write)
    print_ending(report::RunDirectory(*out), {{fmt::format("{} show {}", shell_word(program), shell_word(out->string())), "this report again"}});
  else if (!out)
    fmt::print("\n`{} replay {} --out DIR` writes report.html, summary.md and the Chrome traces into DIR\n", shell_word(program),
               shell_word(run_dir.string()));
  return code;
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
