// Judges each expectation as soon as its own experiment and every experiment it reads have finished,
// so results.json always holds every verdict that can be known.
#pragma once

#include <vector>

#include "report/results.hpp"
#include "series/plan.hpp"

namespace expr::cli {

class Judge {
 public:
  explicit Judge(report::RunResult& run) : run_(run) {}

  // Adds a finished experiment with the expectations to judge for it.
  void add(runner::Measurement measurement, std::vector<series::Expectation> expectations);
  // Judges everything still pending; experiments not in the run make their readers not evaluable.
  void finish();

 private:
  void judge_ready(bool final);

  report::RunResult& run_;
  std::vector<std::vector<expect::Check>> checks_;  // parallel to run_.experiments[i].expectations
};

}  // namespace expr::cli
