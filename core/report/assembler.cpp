// Judging guesses as experiments finish, and telling the sinks.
#include "report/assembler.hpp"

namespace expr::report {

void Assembler::add(outcome::Measurement measurement, std::vector<expect::CompiledGuess> guesses) {
  ExperimentResult e{std::move(measurement), {}};
  std::vector<expect::Check> checks;
  for (auto& g : guesses) {
    e.guesses.push_back({std::move(g.spec), std::nullopt});
    checks.push_back(std::move(g.check));
  }
  run_.experiments.push_back(std::move(e));
  checks_.push_back(std::move(checks));
  judge_ready(false);
  sink_.finished(run_, run_.experiments.back());
}

void Assembler::finish() {
  judge_ready(true);
  sink_.end(run_);
}

void Assembler::judge_ready(bool final) {
  const auto find = [&](const std::string& name) -> const outcome::Measurement* {
    const auto* e = run_.find(name);
    return e ? &e->measurement : nullptr;
  };
  for (std::size_t i = 0; i < run_.experiments.size(); ++i) {
    auto& e = run_.experiments[i];
    for (std::size_t k = 0; k < e.guesses.size(); ++k) {
      auto& g = e.guesses[k];
      if (g.judgement) continue;
      const auto& check = checks_[i][k];
      bool ready = true;
      for (const auto& other : expect::referenced_experiments(check)) ready = ready && run_.find(other);
      if (!ready && !final) continue;
      try {
        g.judgement = expect::judge(check, e.measurement, find);
      } catch (const std::exception& err) {  // a recorded trace that cannot be read, say
        g.judgement = expect::Judgement{};
        g.judgement->reason = err.what();
      }
    }
  }
}

}  // namespace expr::report
