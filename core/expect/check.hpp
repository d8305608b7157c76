// Binding an expectation to metrics and experiments, and judging it against measurements.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "expect/syntax.hpp"
#include "outcome/measurement.hpp"

namespace expr::expect {

// Resolves every name in the check to a metric, a figure and, for `other.metric`, an experiment
// from `experiments`; checks argument names, regexes, copy kinds and that both sides have the same
// kind of value. Throws SyntaxError at the offending name.
void bind(Check& check, const std::vector<std::string>& experiments);

// Parses and binds in one step.
Check compile(std::string_view text, const std::vector<std::string>& experiments);

// Experiments other than its own that the check reads.
std::vector<std::string> referenced_experiments(const Check& check);

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

// Finds another experiment's measurement by name; null when the series has no such experiment.
using FindMeasurement = std::function<const outcome::Measurement*(const std::string& experiment)>;

Judgement judge(const Check& check, const outcome::Measurement& self, const FindMeasurement& find);

}  // namespace expr::expect
