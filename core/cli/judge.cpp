#include "cli/judge.hpp"

namespace expr::cli {

void Judge::add(runner::Measurement measurement, std::vector<series::Expectation> expectations) {
  report::ExperimentResult e{std::move(measurement), {}};
  std::vector<expect::Check> checks;
  for (auto& x : expectations) {
    e.expectations.push_back({x.check.text, x.source, x.required, x.why, x.pos, std::nullopt});
    checks.push_back(std::move(x.check));
  }
  run_.experiments.push_back(std::move(e));
  checks_.push_back(std::move(checks));
  judge_ready(false);
}

void Judge::finish() { judge_ready(true); }

void Judge::judge_ready(bool final) {
  const auto find = [&](const std::string& name) -> const runner::Measurement* {
    const auto* e = run_.find(name);
    return e ? &e->measurement : nullptr;
  };
  for (std::size_t i = 0; i < run_.experiments.size(); ++i) {
    auto& e = run_.experiments[i];
    for (std::size_t k = 0; k < e.expectations.size(); ++k) {
      auto& x = e.expectations[k];
      if (x.judgement) continue;
      const auto& check = checks_[i][k];
      bool ready = true;
      for (const auto& other : expect::referenced_experiments(check)) ready = ready && run_.find(other);
      if (ready || final) x.judgement = expect::judge(check, e.measurement, find);
    }
  }
}

}  // namespace expr::cli
