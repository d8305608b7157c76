// Judging guesses as experiments finish, and telling the sinks.
#include "report/assembler.hpp"

#include <fmt/format.h>

#include <map>

namespace expr::report {

void Assembler::append(FinishedExperiment x) {
  if (x.family.empty()) x.family = x.measurement.experiment;
  ExperimentResult e{std::move(x.measurement), {}, std::move(x.family), std::move(x.point)};
  std::vector<expect::GuessTree> trees;
  for (auto& g : x.guesses) {
    e.guesses.push_back({std::move(g.spec), std::nullopt});
    trees.push_back(std::move(g.tree));
  }
  run_.experiments.push_back(std::move(e));
  trees_.push_back(std::move(trees));
}

void Assembler::add(FinishedExperiment experiment) {
  append(std::move(experiment));
  judge_ready(false);
  sink_.finished(run_, run_.experiments.back());
}

void Assembler::restore(std::vector<FinishedExperiment> experiments) {
  for (auto& e : experiments) append(std::move(e));
  judge_ready(false);
}

void Assembler::finish() {
  judge_ready(true);
  // Every planned point, those that did not run too, so the evidence can say which are missing.
  std::vector<expect::SweepPoint> points;
  for (const auto& p : planned_) {
    const auto* e = run_.find(p.name);
    points.push_back({p.family, &p.point, e ? &e->measurement : nullptr});
  }
  for (const auto& g : sweep_guesses_)
    for (auto& j : expect::judge_sweep(g, points))
      run_.sweep_guesses.push_back({g.family, j.group, {g.spec, j.judgement}, g.axis, g.metric_text, g.metric, g.other, j.geometry});
  sink_.end(run_);
}

void Assembler::judge_ready(bool final) {
  for (std::size_t i = 0; i < run_.experiments.size(); ++i) {
    auto& e = run_.experiments[i];
    for (std::size_t k = 0; k < e.guesses.size(); ++k) {
      auto& g = e.guesses[k];
      if (g.judgement) continue;
      const auto& tree = trees_[i][k];
      // Each experiment the guess names, as the point it reads.
      std::map<std::string, std::string> reads;
      std::string unresolvable;
      bool ready = true;
      for (const auto& other : tree.reads.experiments) {
        const auto r = resolve(other, e.point, planned_);
        if (!r.problem.empty()) unresolvable = r.problem;
        reads[other] = r.experiment;
        ready = ready && run_.find(r.experiment);
      }
      if (!unresolvable.empty()) {
        g.judgement = expect::Judgement{};
        g.judgement->reason = unresolvable;
        continue;
      }
      if (!ready && !final) continue;
      const auto find = [&](const std::string& name) -> const outcome::Measurement* {
        const auto it = reads.find(name);
        const auto* x = run_.find(it == reads.end() ? name : it->second);
        return x ? &x->measurement : nullptr;
      };
      try {
        g.judgement = expect::judge(tree, e.measurement, find);
        for (const auto& [name, point] : reads)
          if (point != name) g.judgement->evidence += fmt::format("{}{} read as {}", g.judgement->evidence.empty() ? "" : "; ", name, point);
      } catch (const std::exception& err) {  // a recorded trace that cannot be read, say
        g.judgement = expect::Judgement{};
        g.judgement->reason = err.what();
      }
    }
  }
}

}  // namespace expr::report
