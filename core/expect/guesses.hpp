// Compiling guesses as written (series/series.hpp's GuessSpec) into checks bound to metrics and
// experiments. A run compiles every guess of its plan before anything runs; replay compiles the
// recorded ones against the recorded experiments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expect/check.hpp"
#include "series/plan.hpp"
#include "util/source.hpp"

namespace expr::expect {

struct CompiledGuess {
  series::GuessSpec spec;
  GuessTree tree;
};

// One list per experiment of the plan, in the plan's order, and each experiment whose guesses read
// its cold call (cold.*) marked to have it traced. Throws util::InputError with every problem: a
// guess that does not parse or bind, an experiment named like a metric.
std::vector<std::vector<CompiledGuess>> compile_guesses(series::Plan& plan);

// Compiles one guess against `experiments`, or adds the problem where the guess was written (its
// message after `context`, such as "the guess of plugin copy: ") and returns nothing.
std::optional<CompiledGuess> compile_guess(const series::GuessSpec& spec, const std::vector<std::string>& experiments,
                                           std::string_view context, std::vector<util::Problem>& problems);

}  // namespace expr::expect
