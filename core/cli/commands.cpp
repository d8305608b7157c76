// The subcommands other than run: validate, list, show, replay and metrics.
#include "cli/commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "analysis/metrics.hpp"
#include "report/assembler.hpp"
#include "report/run_directory.hpp"
#include "report/sinks.hpp"
#include "report/summary.hpp"
#include "util/log.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

ExitCode outcome_code(const report::Tally& t) {
  if (t.experiments_failed > 0) return experiment_failed;
  if (t.required_failed > 0) return required_guess_failed;
  return ok;
}

namespace {

// Each family's sweep guesses, checked against its axes. Throws util::InputError.
std::vector<expect::SweepGuess> compile_sweep_guesses(const series::Plan& plan) {
  std::vector<std::string> families;
  for (const auto& e : plan.experiments)
    if (std::find(families.begin(), families.end(), e.family) == families.end()) families.push_back(e.family);
  std::vector<util::Problem> problems;
  std::vector<expect::SweepGuess> out;
  for (const auto& [family, spec] : plan.sweep_guesses) {
    std::vector<std::string> axes;
    const auto first = std::find_if(plan.experiments.begin(), plan.experiments.end(), [&](const auto& e) { return e.family == family; });
    if (first != plan.experiments.end())
      for (const auto& [axis, value] : first->point) axes.push_back(axis);
    if (auto g = expect::compile_sweep_guess(spec, family, axes, families, problems)) out.push_back(std::move(*g));
  }
  if (!problems.empty()) throw util::InputError(std::move(problems));
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
    loader::PluginCatalog catalog(loader::search_path(s.plugin_path));
    auto plan = series::plan(s, catalog, overrides);
    auto guesses = expect::compile_guesses(plan);
    auto sweep_guesses = compile_sweep_guesses(plan);
    return LoadedSeries{std::move(plan), std::move(guesses), std::move(sweep_guesses)};
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
  loader::PluginCatalog catalog(loader::search_path(extra_dirs));
  const auto found = catalog.available();
  if (found.empty()) {
    fmt::print("no plugins found in:\n");
    for (const auto& d : catalog.dirs()) fmt::print("  {}\n", d.string());
    return ok;
  }
  int status = ok;
  for (const auto& [name, file] : found) {
    try {
      const auto lib = catalog.find(name);
      const auto& d = lib->description();
      std::vector<std::string> devices;
      for (auto dev : d.devices) devices.push_back(dev == Device::cuda ? "cuda" : "cpu");
      fmt::print("{} — {}\n  file: {}\n  devices: {}\n", d.name, d.summary, file.string(), fmt::format("{}", fmt::join(devices, ", ")));
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

void print_traces_line(const report::RunDirectory& dir, std::string_view before) {
  if (fs::exists(dir.traces())) {
    fmt::print("{}traces:  {} (Perfetto, TensorBoard, HTA: docs/chrome-trace.md)\n", before, dir.traces().string());
    return;
  }
  // Before traces/ had a folder of its own, each Chrome trace lay beside its native trace.
  if (fs::exists(dir.root() / "experiments"))
    for (const auto& e : fs::directory_iterator(dir.root() / "experiments"))
      if (fs::exists(e.path() / "chrome_trace.json")) {
        fmt::print("{}traces:  {}/*/chrome_trace.json (an older layout; `expr replay {} --out DIR` writes them for TensorBoard and HTA)\n",
                   before, (dir.root() / "experiments").string(), dir.root().string());
        return;
      }
}

int show(const fs::path& run_dir) {
  try {
    const report::RunDirectory dir(run_dir);
    const auto run = dir.read();
    fmt::print("{}", report::terminal_report(run, ::isatty(STDOUT_FILENO)));
    if (run.experiments.size() < run.planned)
      fmt::print("\nincomplete: {} of {} planned experiments have a result\n", run.experiments.size(), run.planned);
    print_traces_line(dir, "\n");
    return ok;
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return bad_input;
  }
}

namespace {

struct ReplayGuesses {
  std::map<std::string, std::vector<expect::CompiledGuess>> per_experiment;
  std::vector<expect::SweepGuess> sweeps;
};

// The guesses to judge again, per experiment and about whole sweeps: the recorded ones, each at the
// place it was written, with the series' own replaced by those of `series_file` when one is given.
ReplayGuesses replay_guesses(const report::RunResult& recorded, const std::optional<fs::path>& series_file) {
  std::vector<std::string> names;  // families, as guesses name them
  for (const auto& e : recorded.experiments)
    if (std::find(names.begin(), names.end(), e.family) == names.end()) names.push_back(e.family);
  std::vector<util::Problem> problems;
  std::optional<series::Series> s;
  if (series_file) s = series::read(*series_file);

  // The series' own guesses first, then the plugin's, as a run orders them.
  ReplayGuesses out;
  const auto add = [&](const std::string& experiment, const series::GuessSpec& spec, const util::SourcePos& fallback) {
    if (auto g = expect::compile_guess(spec, names, fallback, problems)) out.per_experiment[experiment].push_back(std::move(*g));
  };
  const auto add_sweep = [&](const std::string& family, const series::GuessSpec& spec) {
    std::vector<std::string> axes;
    for (const auto& e : recorded.experiments)
      if (e.family == family) {
        for (const auto& [axis, value] : e.point) axes.push_back(axis);
        break;
      }
    if (auto g = expect::compile_sweep_guess(spec, family, axes, names, problems)) out.sweeps.push_back(std::move(*g));
  };
  if (s)
    for (const auto& x : s->experiments) {
      if (std::find(names.begin(), names.end(), x.name.value) == names.end()) {
        problems.push_back({x.name.pos, fmt::format("experiment {} is not in the recorded run", x.name.value)});
        continue;
      }
      for (const auto& e : recorded.experiments)
        if (e.family == x.name.value)
          for (const auto& spec : x.guesses) add(e.measurement.experiment, spec, x.name.pos);
      for (const auto& spec : x.sweep_guesses) add_sweep(x.name.value, spec);
    }
  const util::SourcePos results{report::RunDirectory(recorded.run_dir).results().string(), 0, 0};
  for (const auto& e : recorded.experiments)
    for (const auto& g : e.guesses)
      if (!s || g.spec.origin == series::GuessOrigin::plugin) add(e.measurement.experiment, g.spec, results);
  // A sweep guess was recorded once per group of its other axes; it is judged again once.
  if (!s)
    for (std::size_t i = 0; i < recorded.sweep_guesses.size(); ++i) {
      const auto& g = recorded.sweep_guesses[i];
      const auto same = [&](const report::SweepVerdict& earlier) {
        return earlier.family == g.family && earlier.guess.spec.check == g.guess.spec.check && earlier.guess.spec.pos.str() == g.guess.spec.pos.str();
      };
      if (std::none_of(recorded.sweep_guesses.begin(), recorded.sweep_guesses.begin() + static_cast<std::ptrdiff_t>(i), same))
        add_sweep(g.family, g.guess.spec);
    }
  if (!problems.empty()) throw util::InputError(std::move(problems));
  return out;
}

}  // namespace

int replay(const fs::path& run_dir, const std::optional<fs::path>& series_file, const std::optional<fs::path>& out) {
  report::RunResult recorded;
  ReplayGuesses guesses;
  try {
    recorded = report::RunDirectory(run_dir).read();
    guesses = replay_guesses(recorded, series_file);
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
  run.planned = recorded.experiments.size();
  run.run_dir = out.value_or(run_dir);
  report::Multiplex outputs;
  if (out) {
    const report::RunDirectory dir(*out);
    try {
      dir.create();
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
  }
  log::info("replaying {}{}", run_dir.string(), series_file ? " with the guesses of " + series_file->string() : "");
  outputs.add(report::sinks::run_log());
  outputs.add(report::sinks::terminal_report());
  report::Assembler assembler(run, outputs);
  std::vector<report::PlannedPoint> planned;
  for (const auto& e : recorded.experiments) planned.push_back({e.measurement.experiment, e.family, e.point});
  assembler.set_planned(std::move(planned));
  assembler.set_sweep_guesses(std::move(guesses.sweeps));
  try {
    outputs.begin(run);
    for (auto& e : recorded.experiments) {
      const auto name = e.measurement.experiment;
      assembler.add(std::move(e.measurement), std::move(guesses.per_experiment[name]), std::move(e.family), std::move(e.point));
    }
    assembler.finish();
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return cannot_write;
  }
  return outcome_code(report::tally(run));
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
