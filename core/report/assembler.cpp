// Judging guesses as experiments finish, and telling the sinks.
#include "report/assembler.hpp"

#include <fmt/format.h>

#include <algorithm>
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
  if (!e.guesses.empty()) pending_.push_back(run_.experiments.size());
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
  // Experiments finish in any order with several workers, and a merge reads its shards in the
  // order given; the run lists them as planned, as a serial run does. Every guess is judged by now,
  // so the trees need not stay in step.
  std::map<std::string, std::size_t> order;
  for (std::size_t i = 0; i < planned_.size(); ++i) order.emplace(planned_[i].name, i);
  const auto place = [&](const ExperimentResult& e) {
    const auto it = order.find(e.measurement.experiment);
    return it == order.end() ? order.size() : it->second;
  };
  std::stable_sort(run_.experiments.begin(), run_.experiments.end(), [&](const auto& a, const auto& b) { return place(a) < place(b); });
  trees_.clear();
  pending_.clear();
  // Every planned point, those that did not run too, so the evidence can say which are missing.
  std::vector<expect::SweepPoint> points;
  for (const auto& p : planned_) {
    const auto* e = run_.find(p.name);
    points.push_back({p.family, &p.point, e ? &e->measurement : nullptr});
  }
  for (const auto& g : sweep_guesses_) {
    if (const auto away = elsewhere_of(g); !away.empty()) {
      expect::Judgement j;
      j.reason = fmt::format("the sweep spans other shards: {}; `expr merge` judges this guess", away);
      run_.sweep_guesses.push_back({g.family, "", {g.spec, std::move(j)}, g.axis, g.metric_text, g.metric, g.other, {}});
      continue;
    }
    for (auto& j : expect::judge_sweep(g, points))
      run_.sweep_guesses.push_back({g.family, j.group, {g.spec, j.judgement}, g.axis, g.metric_text, g.metric, g.other, j.geometry});
  }
  sink_.end(run_);
}

std::string Assembler::elsewhere_of(const expect::CompiledSweepGuess& g) const {
  std::string away;
  std::size_t count = 0;
  for (const auto& p : planned_)
    if (p.family == g.family || (!g.other.empty() && p.family == g.other))
      if (const auto it = elsewhere_.find(p.name); it != elsewhere_.end() && !run_.find(p.name)) {
        if (++count <= 3) away += fmt::format("{}{} ({})", away.empty() ? "" : ", ", p.name, it->second);
      }
  if (count > 3) away += fmt::format(" and {} more", count - 3);
  return away;
}

void Assembler::judge_ready(bool final) {
  // Only experiments with a guess still to judge are visited: a guess usually reads its own
  // experiment, so the list stays short and adding an experiment costs the same late in a sweep.
  std::erase_if(pending_, [&](std::size_t i) {
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
      std::string away;
      for (const auto& [name, point] : reads)
        if (const auto it = elsewhere_.find(point); it != elsewhere_.end() && !run_.find(point))
          away += fmt::format("{}{} ({})", away.empty() ? "" : ", ", point, it->second);
      if (!away.empty()) {
        g.judgement = expect::Judgement{};
        g.judgement->reason = fmt::format("reads {}, in another shard; `expr merge` judges this guess", away);
        continue;
      }
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
    return std::all_of(e.guesses.begin(), e.guesses.end(), [](const auto& g) { return g.judgement.has_value(); });
  });
}

}  // namespace expr::report
