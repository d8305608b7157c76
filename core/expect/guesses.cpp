#include "expect/guesses.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/metrics.hpp"

namespace expr::expect {

std::optional<CompiledGuess> compile_guess(const series::GuessSpec& spec, const std::vector<std::string>& experiments,
                                           const util::SourcePos& fallback, std::vector<util::Problem>& problems) {
  try {
    return CompiledGuess{spec, compile(spec.check, experiments)};
  } catch (const SyntaxError& err) {
    // The guess is quoted as its value, with the caret under the offending character, by the one
    // renderer (util::Problem::str()).
    const util::Excerpt quote{spec.check, err.offset(), err.end()};
    if (spec.pos.line > 0)
      problems.push_back({spec.pos.column > 0 ? spec.pos.shifted(static_cast<int>(err.offset())) : spec.pos, err.what(), quote});
    else
      problems.push_back({fallback, fmt::format("the guess of plugin {}: {}", spec.pos.file, err.what()), quote});
    return std::nullopt;
  }
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
    for (const auto& spec : e.guesses)
      if (auto g = compile_guess(spec, names, e.plugin_pos, problems)) {
        e.trace_cold_call = e.trace_cold_call || g->check.reads.cold_call;
        compiled.push_back(std::move(*g));
      }
  }
  if (!problems.empty()) throw util::InputError(std::move(problems));
  return out;
}

}  // namespace expr::expect
