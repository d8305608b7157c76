// Assembles a run's result from its finished experiments: judges each guess as soon as its own
// experiment and every experiment it reads have finished, and shows the run to the sinks after
// each experiment, so results.json always holds every verdict that can be known.
#pragma once

#include <vector>

#include "expect/guesses.hpp"
#include "report/run_result.hpp"
#include "report/sink.hpp"

namespace expr::report {

class Assembler {
 public:
  Assembler(RunResult& run, Sink& sink) : run_(run), sink_(sink) {}

  // Adds a finished experiment with the guesses to judge for it.
  void add(outcome::Measurement measurement, std::vector<expect::CompiledGuess> guesses);
  // Judges everything still pending (experiments not in the run make their readers not
  // evaluable) and ends the run for the sinks.
  void finish();

 private:
  void judge_ready(bool final);

  RunResult& run_;
  Sink& sink_;
  std::vector<std::vector<expect::Check>> checks_;  // parallel to run_.experiments[i].guesses
};

}  // namespace expr::report
