// Compiling a plan's guesses (guesses.hpp).
#include "expect/guesses.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "analysis/metrics.hpp"

namespace expr::expect {

std::optional<CompiledGuess> compile_guess(const series::GuessSpec& spec, const std::vector<std::string>& experiments,
                                           std::string_view context, std::vector<util::Problem>& problems) {
  auto compiled = compile(spec.check, spec.written, experiments, context);
  if (auto* problem = std::get_if<util::Problem>(&compiled)) {
    problems.push_back(std::move(*problem));
    return std::nullopt;
  }
  return CompiledGuess{spec, std::move(std::get<GuessTree>(compiled))};
}

std::vector<std::vector<CompiledGuess>> compile_guesses(series::Plan& plan) {
  std::vector<util::Problem> problems;
  // A guess names an experiment by its family: a sweep's points are resolved like with like when
  // judged (report/assembler.cpp).
  std::vector<std::string> names;
  for (const auto& e : plan.experiments) {
    if (std::find(names.begin(), names.end(), e.family) != names.end()) continue;
    names.push_back(e.family);
    if (analysis::find_metric(e.family))
      problems.push_back({e.name_pos, fmt::format("experiment name '{}' is also a metric; guesses could not tell them apart", e.family)});
    else if (e.family == analysis::cold_prefix)
      problems.push_back({e.name_pos, "experiment name 'cold' is taken: cold.metric reads an experiment's cold first call"});
  }
  std::vector<std::vector<CompiledGuess>> out;
  for (auto& e : plan.experiments) {
    auto& compiled = out.emplace_back();
    const auto plugin_context = fmt::format("the guess of plugin {}: ", e.plugin->description().name);
    for (const auto& spec : e.guesses)
      if (auto g = compile_guess(spec, names, spec.origin == series::GuessOrigin::plugin ? plugin_context : "", problems)) {
        e.trace_cold_call = e.trace_cold_call || g->tree.reads.cold_call;
        compiled.push_back(std::move(*g));
      }
  }
  // Every point of a sweep holds its family's guesses: a wrong one is reported once.
  std::vector<util::Problem> distinct;
  std::set<std::string> shown;
  for (auto& p : problems)
    if (shown.insert(p.str()).second) distinct.push_back(std::move(p));
  if (!distinct.empty()) throw util::InputError(std::move(distinct));
  return out;
}

}  // namespace expr::expect
