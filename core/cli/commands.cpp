// The subcommands other than run: validate, list, show, replay and metrics.
#include "cli/commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "analysis/metrics.hpp"
#include "cli/judge.hpp"
#include "report/chrome_trace.hpp"
#include "report/results_file.hpp"
#include "report/summary.hpp"
#include "runner/series_runner.hpp"
#include "series/plan.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

std::optional<series::Plan> load_plan(const fs::path& file) {
  try {
    const auto s = series::read(file);
    loader::PluginCatalog catalog(loader::search_path(s.plugin_path));
    return series::plan(s, catalog);
  } catch (const util::InputError& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "{}\n", p.str());
    fmt::print(stderr, "{} problem{} in {}; nothing ran\n", e.problems().size(), e.problems().size() == 1 ? "" : "s", file.string());
    return std::nullopt;
  }
}

int validate(const fs::path& file) {
  const auto plan = load_plan(file);
  if (!plan) return bad_input;
  std::size_t expectations = 0;
  for (const auto& e : plan->experiments) expectations += e.expectations.size();
  fmt::print("{}: series {} is valid: {} experiments, {} expectations\n", file.string(), plan->name, plan->experiments.size(), expectations);
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
      fmt::print(stderr, "error: {}\n", e.what());
      status = bad_input;
    }
  }
  return status;
}

int show(const fs::path& run_dir) {
  try {
    const auto run = report::read_results(run_dir);
    fmt::print("{}", report::terminal_report(run, ::isatty(STDOUT_FILENO)));
    return ok;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return bad_input;
  }
}

namespace {

// The expectations to judge again, per experiment: the stored ones, with the series' own replaced
// by those of `series_file` when one is given.
std::map<std::string, std::vector<series::Expectation>> replay_expectations(const report::RunResult& recorded,
                                                                          const std::optional<fs::path>& series_file) {
  std::vector<std::string> names;
  for (const auto& e : recorded.experiments) names.push_back(e.measurement.experiment);
  std::vector<util::Problem> problems;
  std::optional<series::Series> s;
  if (series_file) s = series::read(*series_file);

  // The series' own guesses first, then the plugin's, as a run orders them.
  std::map<std::string, std::vector<series::Expectation>> out;
  if (s)
    for (const auto& x : s->experiments) {
      if (std::find(names.begin(), names.end(), x.name.value) == names.end()) {
        problems.push_back({x.name.pos, fmt::format("experiment {} is not in the recorded run", x.name.value)});
        continue;
      }
      for (const auto& spec : x.expectations) {
        try {
          out[x.name.value].push_back({expect::compile(spec.check, names), "series", spec.required, spec.why, spec.pos});
        } catch (const expect::SyntaxError& err) {
          problems.push_back({spec.pos.shifted(static_cast<int>(err.offset())), err.what()});
        }
      }
    }
  for (const auto& e : recorded.experiments)
    for (const auto& x : e.expectations) {
      if (s && x.source == "series") continue;
      try {
        out[e.measurement.experiment].push_back({expect::compile(x.check, names), x.source, x.required, x.why, x.pos});
      } catch (const expect::SyntaxError& err) {
        problems.push_back({{(recorded.run_dir / "results.json").string(), 0, 0},
                            fmt::format("{}: stored expectation '{}': {}", e.measurement.experiment, x.check, err.what())});
      }
    }
  if (!problems.empty()) throw util::InputError(std::move(problems));
  return out;
}

}  // namespace

int replay(const fs::path& run_dir, const std::optional<fs::path>& series_file, const std::optional<fs::path>& out) {
  report::RunResult recorded;
  std::map<std::string, std::vector<series::Expectation>> expectations;
  try {
    recorded = report::read_results(run_dir);
    expectations = replay_expectations(recorded, series_file);
  } catch (const util::InputError& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "{}\n", p.str());
    return bad_input;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return bad_input;
  }

  report::RunResult run;
  run.series = recorded.series;
  run.series_file = series_file ? series_file->string() : recorded.series_file;
  run.description = recorded.description;
  run.environment = recorded.environment;
  run.started = recorded.started;
  run.finished = recorded.finished;
  run.run_dir = out.value_or(run_dir);
  Judge judge(run);
  for (auto& e : recorded.experiments) {
    const auto name = e.measurement.experiment;
    auto m = std::move(e.measurement);
    if (out && m.trace) {
      const auto dir = runner::experiment_dir(*out, m.experiment);
      fs::create_directories(dir);
      report::write_chrome_trace(*m.trace, run.series + " / " + m.experiment, dir / "chrome_trace.json");
      m.chrome_file = fs::relative(dir / "chrome_trace.json", *out).string();
    }
    judge.add(std::move(m), std::move(expectations[name]));
  }
  judge.finish();
  if (out) {
    try {
      report::write_reports(run);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      return cannot_write;
    }
  }
  fmt::print("{}", report::terminal_report(run, ::isatty(STDOUT_FILENO)));
  const auto t = report::tally(run);
  if (t.experiments_failed > 0) return experiment_failed;
  if (t.required_failed > 0) return required_guess_failed;
  return ok;
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
