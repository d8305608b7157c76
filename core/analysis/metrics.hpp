// The questions guesses can ask of an experiment, each answered by a small analyzer over the
// measurement and its normalized trace. The catalog is the single list of metric names: the
// guess checker validates against it and `expr metrics` prints it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analysis/value.hpp"
#include "outcome/measurement.hpp"

namespace expr::analysis {

// A metric as a guess names it, after binding: kernel(name="flash").occupancy
struct MetricCall {
  std::string metric;
  std::map<std::string, std::string> args;  // argument name -> text (a regex, a copy kind, a key)
  std::string field;                        // for selectors, the figure asked for
  bool cold = false;                        // written cold.metric: over the experiment's cold call
};

// `cold.metric` evaluates any metric over the experiment's cold first call, traced in a fresh
// worker (Measurement::cold) rather than over its warm traced iterations and timings.
inline constexpr std::string_view cold_prefix = "cold";
extern const std::string_view cold_doc;  // what `expr metrics` says about it

struct Observation {
  Value value;
  std::string evidence;               // what in the trace gave the value
  std::vector<std::string> caveats;   // e.g. the trace lost records, so a count may be low
  bool absent = false;                // a selector matched nothing: the value is only a label
};

struct Unavailable {
  std::string reason;  // e.g. "kernels needs device tracing, which was unavailable: no CUDA device"
};

using Outcome = std::variant<Observation, Unavailable>;

enum class ArgKind { pattern, copy_kind, key };

struct ArgSpec {
  std::string name;
  ArgKind kind;
  std::string doc;
};

struct FieldSpec {
  std::string name;
  Dimension dim;
  Display display = Display::number;
  bool text = false;  // a string-valued figure
  std::string doc;
  bool dynamic = false;  // a number or a string, known only once evaluated (facts)
};

struct MetricSpec {
  std::string name;
  std::string doc;
  std::vector<ArgSpec> args;      // the first takes a positional argument
  std::vector<FieldSpec> fields;  // non-empty: a selector, written metric(...).field
  FieldSpec result;               // the value's type when not a selector
  std::function<Outcome(const outcome::Measurement&, const MetricCall&)> compute;

  bool selector() const { return !fields.empty(); }
  const FieldSpec* field(std::string_view name) const;
  const ArgSpec* arg(std::string_view name) const;
};

const std::vector<MetricSpec>& catalog();
const MetricSpec* find_metric(std::string_view name);
std::vector<std::string> metric_names();

// The type of what `call` yields (of its field, for selectors).
const FieldSpec& result_type(const MetricSpec& spec, const MetricCall& call);

Outcome evaluate(const outcome::Measurement& m, const MetricCall& call);

}  // namespace expr::analysis
