// Assembles a run's result from its finished experiments: judges each guess as soon as its own
// experiment and every experiment it reads have finished, and shows the run to the sinks after
// each experiment, so results.json always holds every verdict that can be known.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "expect/guesses.hpp"
#include "expect/sweep.hpp"
#include "report/like_with_like.hpp"
#include "report/run_result.hpp"
#include "report/sink.hpp"

namespace expr::report {

// A finished experiment with the guesses to judge for it, and the sweep point it is
// (series/axes.hpp; the family is the experiment's own name when it has no axes).
struct FinishedExperiment {
  outcome::Measurement measurement;
  std::vector<expect::CompiledGuess> guesses;
  std::string family = {};
  series::AxisPoint point = {};
};

class Assembler {
 public:
  Assembler(RunResult& run, Sink& sink) : run_(run), sink_(sink) {}

  // Adds an experiment as it finishes, judges what can be judged, and tells the sinks.
  void add(FinishedExperiment experiment);
  // Experiments that finished in an earlier attempt at this run (`expr run --resume`), before the
  // run begins: judged like the others, but the sinks are not told, since their files are written
  // and stay as they are.
  void restore(std::vector<FinishedExperiment> experiments);
  // The run's experiments as planned, so that a guess naming a sweep's family reads its matching
  // point (like_with_like.hpp); without it, names are taken as they are.
  void set_planned(std::vector<PlannedPoint> planned) { planned_ = std::move(planned); }
  // Planned experiments that run elsewhere (in another shard: "shard 2/3"). A guess that reads one,
  // or a sweep guess over one, is not evaluable here and says where; `expr merge` judges it.
  void set_elsewhere(std::map<std::string, std::string> where) { elsewhere_ = std::move(where); }
  // Guesses about whole sweeps, judged at the end over every point.
  void set_sweep_guesses(std::vector<expect::CompiledSweepGuess> guesses) { sweep_guesses_ = std::move(guesses); }
  // Judges everything still pending (experiments not in the run make their readers not
  // evaluable) and ends the run for the sinks.
  void finish();

 private:
  void append(FinishedExperiment experiment);
  void judge_ready(bool final);
  // The points a sweep guess spans that run in another shard, named; empty when none.
  std::string elsewhere_of(const expect::CompiledSweepGuess& g) const;

  RunResult& run_;
  Sink& sink_;
  std::vector<std::vector<expect::GuessTree>> trees_;  // parallel to run_.experiments[i].guesses
  std::vector<std::size_t> pending_;                   // the experiments with a guess not judged yet
  std::vector<PlannedPoint> planned_;
  std::map<std::string, std::string> elsewhere_;
  std::vector<expect::CompiledSweepGuess> sweep_guesses_;
};

}  // namespace expr::report
