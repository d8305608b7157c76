// Compiling a guess (parse, then bind) and judging it: the comparison's verdict with its evidence.
#include "expect/check.hpp"

#include <fmt/format.h>

namespace expr::expect {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::confirmed: return "confirmed";
    case Verdict::contradicted: return "contradicted";
    case Verdict::not_evaluable: return "not evaluable";
  }
  return "?";
}

GuessTree compile(std::string_view text, const std::vector<std::string>& experiments) {
  auto tree = parse(text);
  tree.bind(experiments);
  return tree;
}

std::variant<GuessTree, util::Problem> compile(std::string_view text, const util::TextOrigin& origin,
                                           const std::vector<std::string>& experiments, std::string_view context) {
  try {
    return compile(text, experiments);
  } catch (const SyntaxError& e) {
    return origin.problem(e.offset(), e.end(), std::string(context) + e.what());
  }
}

namespace {

std::string tolerance_text(const Tolerance& t) {
  if (t.kind == Tolerance::Kind::relative) return " within " + analysis::format(t.amount);
  return " ± " + analysis::format(t.amount);
}

}  // namespace

Judgement judge(const GuessTree& tree, const outcome::Measurement& self, const FindMeasurement& find) {
  Evaluation observed{tree.text, self, find};
  Evaluation guessed{tree.text, self, find};
  const auto observed_value = tree.observed->evaluate(observed);
  const auto guessed_value = tree.guessed->evaluate(guessed);

  Judgement j;
  for (auto* ev : {&observed, &guessed}) {
    for (auto& e : ev->evidence) j.evidence += (j.evidence.empty() ? "" : "; ") + e;
    j.caveats.insert(j.caveats.end(), ev->caveats.begin(), ev->caveats.end());
  }
  const auto guessed_text = std::string(tree.guessed->written(tree.text));
  j.guessed = std::string(to_string(tree.comparison)) + " " + guessed_text;
  if (tree.tolerance) j.guessed += tolerance_text(*tree.tolerance);

  if (observed.absent || guessed.absent) {
    // The guess names a kernel or copy that did not run: the trace contradicts it.
    j.verdict = Verdict::contradicted;
    j.observed = "none matches";
    return j;
  }
  if (!observed_value || !guessed_value) {
    j.verdict = Verdict::not_evaluable;
    j.reason = observed_value ? guessed.unavailable : observed.unavailable;
    return j;
  }
  j.observed = analysis::format(*observed_value);
  if (!dynamic_cast<const Literal*>(tree.guessed.get()))
    j.guessed = std::string(to_string(tree.comparison)) + " " + analysis::format(*guessed_value) + " (" + guessed_text + ")" +
                (tree.tolerance ? tolerance_text(*tree.tolerance) : "");
  const auto decision = tree.decide(*observed_value, *guessed_value);
  if (const auto* not_evaluable = std::get_if<NotEvaluable>(&decision)) {
    j.verdict = Verdict::not_evaluable;
    j.reason = not_evaluable->reason;
    return j;
  }
  j.verdict = std::get<bool>(decision) ? Verdict::confirmed : Verdict::contradicted;
  return j;
}

}  // namespace expr::expect
