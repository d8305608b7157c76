// Compiling a guess (its text parsed, then bound to metrics and experiments) and judging it
// against measurements.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "expect/syntax.hpp"
#include "outcome/measurement.hpp"
#include "util/source.hpp"

namespace expr::expect {

// Parses `text` and binds every name in it to a metric, a figure and, for `other.metric`, an
// experiment from `experiments`; checks argument names, regexes, copy kinds and that both sides
// have the same kind of value. Throws SyntaxError at the offending text.
GuessTree compile(std::string_view text, const std::vector<std::string>& experiments);

// The same, with a problem as a value: reported, quoted and marked where `origin` says the text was
// written, its message after `context` ("plugin copy, guess 2: ").
std::variant<GuessTree, util::Problem> compile(std::string_view text, const util::TextOrigin& origin,
                                           const std::vector<std::string>& experiments, std::string_view context = {});

enum class Verdict { confirmed, contradicted, not_evaluable };
std::string_view to_string(Verdict v);

struct Judgement {
  Verdict verdict = Verdict::not_evaluable;
  std::string observed;  // "7.24 ms"
  std::string guessed;   // "< 1.955 ms", "~ 13% ± 2%", "< 146.8 µs (sdpa_flash.gpu_time)"
  std::string evidence;  // what in the trace gave the observed value
  std::string reason;    // why it could not be judged
  std::vector<std::string> caveats;
};

Judgement judge(const GuessTree& tree, const outcome::Measurement& self, const FindMeasurement& find);

}  // namespace expr::expect
