// Each node's type rule next to its evaluation: Literal, Reference, Arithmetic, Negation, and the
// comparison at the root (GuessTree).
#include "expect/expression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/noise.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace expr::expect {

using analysis::Display;
using analysis::Quantity;
using analysis::Unit;
using analysis::Value;

namespace {

// "unknown metric 'device_time'; did you mean 'gpu_time'? (`expr metrics` lists every metric)": the
// closest name, else the metric that another tool's word names (the reports' columns use these names).
std::string unknown_metric(const std::string& name) {
  static const std::map<std::string, std::string> other_words{{"device_time", "gpu_time"}, {"cuda_time", "gpu_time"},
                                                              {"kernel_time", "gpu_time"}, {"cpu_time", "host_time"},
                                                              {"wall_time", "host_time"},  {"cold_call", "first_call"}};
  auto hint = util::did_you_mean(name, analysis::metric_names());
  if (const auto it = other_words.find(name); hint.empty() && it != other_words.end()) hint = "; did you mean '" + it->second + "'?";
  return fmt::format("unknown metric '{}'{} (`expr metrics` lists every metric)", name, hint);
}

std::string describe(const Type& t) {
  if (t.kind == Type::Kind::text) return "text";
  return analysis::describe(t.unit.dim);
}

std::vector<std::string> names_of(const auto& specs) {
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  return names;
}

// Every regex a guess holds is compiled here, while binding, so a bad one stops validation rather
// than the judging after a run. [begin, end) is where it was written.
util::Regex compile_regex(const std::string& pattern, std::size_t begin, std::size_t end) {
  try {
    return util::Regex(pattern);
  } catch (const util::RegexError& e) {
    throw SyntaxError(begin, end, fmt::format("'{}' is not a valid regex: {}", pattern, e.what()));
  }
}

const Literal* text_literal(const Node& n) {
  const auto* literal = dynamic_cast<const Literal*>(&n);
  return literal && std::holds_alternative<std::string>(literal->value) ? literal : nullptr;
}

// A number from a value: facts are typed only once read, and a text fact cannot be computed with.
std::optional<Quantity> number(const std::optional<Value>& v, const Node& n, Evaluation& ev) {
  if (!v) return std::nullopt;
  if (const auto* q = std::get_if<Quantity>(&*v)) return *q;
  ev.unavailable = fmt::format("'{}' is text (\"{}\"), not a number", n.written(ev.text), std::get<std::string>(*v));
  return std::nullopt;
}

}  // namespace

// ---- Literal ------------------------------------------------------------------------------------

Type Literal::bind(Scope&) {
  if (const auto* q = std::get_if<Quantity>(&value)) return {Type::Kind::number, q->unit()};
  return {Type::Kind::text, {}};
}

std::optional<Value> Literal::evaluate(Evaluation&) const { return value; }

// ---- Reference ----------------------------------------------------------------------------------

namespace {

void bind_arguments(Reference& ref, const Reference::Segment& seg, const analysis::MetricSpec& spec) {
  const std::vector<Argument> none;
  const auto& args = seg.args ? *seg.args : none;
  if (spec.args.empty() && !args.empty())
    throw SyntaxError(args.front().offset, args.back().end, spec.name + " takes no arguments");
  bool positional_used = false;
  for (const auto& a : args) {
    const analysis::ArgSpec* arg = nullptr;
    if (!a.name) {
      if (positional_used)
        throw SyntaxError(a.offset, a.end, fmt::format("only the first argument of {} may go without a name; write name=value "
                                                       "(arguments: {})", spec.name, util::one_of(names_of(spec.args))));
      positional_used = true;
      // A bare copy kind (copies(DtoD)) is the kind even when it is not the first argument.
      const bool is_kind = spec.arg("kind") && trace::copy_kind_from(a.value) != trace::CopyKind::unknown;
      arg = is_kind ? spec.arg("kind") : &spec.args.front();
    } else {
      arg = spec.arg(*a.name);
      if (!arg)
        throw SyntaxError(a.name_offset, a.name_offset + a.name->size(),
                          fmt::format("{} has no argument '{}'{}", spec.name, *a.name, util::did_you_mean(*a.name, names_of(spec.args))));
    }
    if (ref.call.args.count(arg->name)) throw SyntaxError(a.offset, a.end, fmt::format("argument '{}' given twice", arg->name));
    if (arg->kind == analysis::ArgKind::copy_kind && trace::copy_kind_from(a.value) == trace::CopyKind::unknown) {
      std::vector<std::string> kinds;
      for (int k = 1; k <= static_cast<int>(trace::CopyKind::PtoP); ++k) kinds.emplace_back(trace::to_string(static_cast<trace::CopyKind>(k)));
      throw SyntaxError(a.offset, a.end, fmt::format("unknown copy kind '{}'{}; kinds are {}", a.value, util::did_you_mean(a.value, kinds),
                                                     util::one_of(kinds)));
    }
    if (arg->kind == analysis::ArgKind::pattern) compile_regex(a.value, a.offset, a.end);
    ref.call.args[arg->name] = a.value;
  }
  for (const auto& needed : spec.args)
    if (needed.kind == analysis::ArgKind::key && !ref.call.args.count(needed.name))
      throw SyntaxError(seg.offset, seg.offset + seg.name.size(),
                        fmt::format("{} needs its {} argument, e.g. {}(\"backend\")", spec.name, needed.name, spec.name));
}

SyntaxError at_name(const Reference::Segment& seg, const std::string& message) {
  return SyntaxError(seg.offset, seg.offset + seg.name.size(), message);
}

}  // namespace

Type Reference::bind(Scope& scope) {
  auto& segs = segments;
  // cold.metric: the same metric over the experiment's cold first call (analysis::cold_prefix).
  if (segs.size() > 1 && segs[0].name == analysis::cold_prefix && !segs[0].args) {
    if (!analysis::find_metric(segs[1].name))
      throw at_name(segs[1], fmt::format("cold. reads a metric of this experiment's own cold call, and '{}' is no metric{}",
                                         segs[1].name, util::did_you_mean(segs[1].name, analysis::metric_names())));
    call.cold = true;
    scope.reads.cold_call = true;
    segs.erase(segs.begin());
  }
  std::size_t i = 0;
  if (!analysis::find_metric(segs[0].name)) {
    const bool names_experiment = std::find(scope.experiments.begin(), scope.experiments.end(), segs[0].name) != scope.experiments.end();
    if (segs.size() == 1 || segs[0].args || !names_experiment) {
      if (segs.size() > 1 && !segs[0].args)
        throw at_name(segs[0], fmt::format("'{}' is neither a metric nor an experiment of this series{}", segs[0].name,
                                           util::did_you_mean(segs[0].name, scope.experiments)));
      throw at_name(segs[0], unknown_metric(segs[0].name));
    }
    experiment = segs[0].name;
    auto& read = scope.reads.experiments;
    if (std::find(read.begin(), read.end(), experiment) == read.end()) read.push_back(experiment);
    i = 1;
    if (!analysis::find_metric(segs[i].name))
      throw at_name(segs[i], unknown_metric(segs[i].name));
  }
  const auto& metric = segs[i];
  const auto& spec = *analysis::find_metric(metric.name);
  call.metric = spec.name;
  bind_arguments(*this, metric, spec);
  if (spec.selector()) {
    if (i + 1 >= segs.size())
      throw at_name(metric, fmt::format("{} picks one {}; add the figure you want: .{}", spec.name, spec.name,
                                        util::one_of(names_of(spec.fields))));
    const auto& field = segs[i + 1];
    if (field.args) throw at_name(field, fmt::format("figure '{}' takes no arguments", field.name));
    if (!spec.field(field.name))
      throw at_name(field, fmt::format("{} has no figure '{}'{}", spec.name, field.name,
                                       util::did_you_mean(field.name, names_of(spec.fields))));
    call.field = field.name;
    ++i;
  }
  if (i + 1 < segs.size()) throw at_name(segs[i + 1], fmt::format("{} has no figure '.{}'", spec.name, segs[i + 1].name));

  const auto& result = analysis::result_type(spec, call);
  if (result.dynamic) return {Type::Kind::dynamic, {}};
  if (result.text) return {Type::Kind::text, {}};
  return {Type::Kind::number, {result.dim, result.display}};
}

std::optional<Value> Reference::evaluate(Evaluation& ev) const {
  const outcome::Measurement* m = &ev.self;
  if (!experiment.empty()) {
    m = ev.find(experiment);
    if (!m) {
      ev.unavailable = fmt::format("experiment {} is not in this run", experiment);
      return std::nullopt;
    }
  }
  const auto outcome = analysis::evaluate(*m, call);
  if (const auto* u = std::get_if<analysis::Unavailable>(&outcome)) {
    ev.unavailable = experiment.empty() ? u->reason : experiment + ": " + u->reason;
    return std::nullopt;
  }
  const auto& o = std::get<analysis::Observation>(outcome);
  const auto* q = std::get_if<Quantity>(&o.value);
  ev.evidence.push_back(fmt::format("{} = {}: {}", written(ev.text), q ? analysis::format_with_interval(*q) : analysis::format(o.value), o.evidence));
  ev.caveats.insert(ev.caveats.end(), o.caveats.begin(), o.caveats.end());
  if (o.absent) {
    ev.absent = true;
    return std::nullopt;
  }
  return o.value;
}

// ---- Arithmetic ---------------------------------------------------------------------------------

Arithmetic::Arithmetic(char op, NodePtr lhs, NodePtr rhs) : op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {
  height = 1 + std::max(this->lhs->height, this->rhs->height);
}

// Both the rule and the evaluation take the unit of the result from analysis::arithmetic_unit.
Type Arithmetic::bind(Scope& scope) {
  const auto l = lhs->bind(scope);
  const auto r = rhs->bind(scope);
  if (l.kind == Type::Kind::text || r.kind == Type::Kind::text)
    throw SyntaxError(begin, end, fmt::format("cannot compute with text using '{}'", op));
  if (l.kind == Type::Kind::dynamic || r.kind == Type::Kind::dynamic) return {Type::Kind::dynamic, {}};
  const auto unit = analysis::arithmetic_unit(op, l.unit, r.unit);
  if (const auto* undefined = std::get_if<analysis::Undefined>(&unit)) throw SyntaxError(rhs->begin, rhs->end, undefined->reason);
  return {Type::Kind::number, std::get<Unit>(unit)};
}

std::optional<Value> Arithmetic::evaluate(Evaluation& ev) const {
  const auto l = number(lhs->evaluate(ev), *lhs, ev);
  if (!l) return std::nullopt;
  const auto r = number(rhs->evaluate(ev), *rhs, ev);
  if (!r) return std::nullopt;
  auto result = analysis::arithmetic(op, *l, *r);
  if (const auto* undefined = std::get_if<analysis::Undefined>(&result)) {
    ev.unavailable = fmt::format("{} is undefined: {}", written(ev.text), undefined->reason);
    return std::nullopt;
  }
  return std::get<Quantity>(result);
}

// ---- Negation -----------------------------------------------------------------------------------

Negation::Negation(NodePtr operand) : operand(std::move(operand)) { height = 1 + this->operand->height; }

Type Negation::bind(Scope& scope) {
  const auto t = operand->bind(scope);
  if (t.kind == Type::Kind::text) throw SyntaxError(begin, end, "cannot negate text");
  return t;
}

std::optional<Value> Negation::evaluate(Evaluation& ev) const {
  auto q = number(operand->evaluate(ev), *this, ev);
  if (!q) return std::nullopt;
  q->value = -q->value;
  if (q->interval) q->interval = util::Interval{-q->interval->high, -q->interval->low};
  return *q;
}

// ---- The comparison -----------------------------------------------------------------------------

std::string_view to_string(Comparison c) {
  switch (c) {
    case Comparison::equal: return "==";
    case Comparison::not_equal: return "!=";
    case Comparison::less: return "<";
    case Comparison::less_equal: return "<=";
    case Comparison::greater: return ">";
    case Comparison::greater_equal: return ">=";
    case Comparison::approx: return "~";
  }
  return "?";
}

namespace {

// Advice for a value of dimension `written` where one of `wanted` belongs: a bare number lacks its
// unit; anything else (a duration times a duration) has the wrong dimension, which no unit mends.
std::string unit_hint(analysis::Dimension wanted, analysis::Dimension written) {
  if (!written.dimensionless()) return "; the units do not cancel to " + analysis::describe(wanted);
  if (wanted == analysis::duration) return "; write it with a unit: ns, us, ms or s";
  if (wanted == analysis::data) return "; write it with a unit: B, KiB, MiB, GiB, KB, MB or GB";
  return "";
}

const char* const text_comparisons = "text compares only with ==, != or ~ (regex search)";
const char* const regex_needed = "`~` on text searches for a regex, written as a \"string\" after the `~`";

}  // namespace

void GuessTree::bind(const std::vector<std::string>& series_experiments) {
  Scope scope{series_experiments, reads};
  const auto o = observed->bind(scope);
  const auto g = guessed->bind(scope);
  using K = Type::Kind;
  if (comparison == Comparison::approx) {
    if (const auto* regex = text_literal(*guessed)) {
      if (tolerance) throw SyntaxError(tolerance->offset, tolerance->end, "a regex search takes no tolerance");
      pattern = compile_regex(std::get<std::string>(regex->value), guessed->begin, guessed->end);
    }
  }
  if (o.kind == K::dynamic || g.kind == K::dynamic) return;
  if ((o.kind == K::text) != (g.kind == K::text))
    throw SyntaxError(guessed->begin, guessed->end, fmt::format("cannot compare {} with {}", describe(o), describe(g)));
  if (o.kind == K::text) {
    if (comparison != Comparison::equal && comparison != Comparison::not_equal && comparison != Comparison::approx)
      throw SyntaxError(guessed->begin, guessed->end, text_comparisons);
    if (comparison == Comparison::approx && !pattern) throw SyntaxError(guessed->begin, guessed->end, regex_needed);
    return;
  }
  if (!(o.unit.dim == g.unit.dim))
    throw SyntaxError(guessed->begin, guessed->end, fmt::format("the observed value is {} but the guess is {}{}", describe(o),
                                                                describe(g), unit_hint(o.unit.dim, g.unit.dim)));
  if (tolerance && tolerance->kind == Tolerance::Kind::absolute) {
    const auto& amount = tolerance->amount;
    if (amount.display == Display::percent && g.unit.display != Display::percent)
      throw SyntaxError(tolerance->offset, tolerance->end,
                        "± with a percentage is for guesses written as percentages; for a relative tolerance write `within N%`");
    if (!(amount.dim == g.unit.dim))
      throw SyntaxError(tolerance->offset, tolerance->end,
                        fmt::format("the tolerance is {} but the guess is {}{}", analysis::describe(amount.dim), describe(g),
                                    unit_hint(g.unit.dim, amount.dim)));
  }
}

namespace {

bool holds(Comparison c, double a, double b, const std::optional<Tolerance>& tolerance) {
  const bool same = std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
  switch (c) {
    case Comparison::equal: return same;
    case Comparison::not_equal: return !same;
    case Comparison::less: return a < b && !same;
    case Comparison::less_equal: return a <= b || same;
    case Comparison::greater: return a > b && !same;
    case Comparison::greater_equal: return a >= b || same;
    case Comparison::approx: {
      const double allowed = tolerance->kind == Tolerance::Kind::relative ? tolerance->amount.value * std::fabs(b) : tolerance->amount.value;
      return std::fabs(a - b) <= allowed * (1 + 1e-12);
    }
  }
  return false;
}

enum class Decision { holds, fails, within_noise };

// Whether the comparison holds for every value the two intervals allow, for none, or for some
// only: then the measurement cannot tell, and the guess is within noise.
Decision decide_intervals(Comparison c, util::Interval o, util::Interval g, const std::optional<Tolerance>& tolerance) {
  const auto of = [](bool b) { return b ? Decision::holds : Decision::fails; };
  const bool overlap = o.low <= g.high && g.low <= o.high;
  switch (c) {
    case Comparison::equal: return overlap ? Decision::within_noise : Decision::fails;
    case Comparison::not_equal: return overlap ? Decision::within_noise : Decision::holds;
    case Comparison::approx: {
      // The distance between the two ranges at its smallest and largest, against the tolerance at
      // its tightest and loosest (a relative one scales with the guessed value).
      const double nearest = overlap ? 0 : std::max(o.low - g.high, g.low - o.high);
      const double farthest = std::max(o.high - g.low, g.high - o.low);
      const double amount = tolerance->amount.value * (1 + 1e-12);
      const bool relative = tolerance->kind == Tolerance::Kind::relative;
      const double smallest_guess = overlap && g.low <= 0 && g.high >= 0 ? 0 : std::min(std::fabs(g.low), std::fabs(g.high));
      const double tightest = relative ? amount * smallest_guess : amount;
      const double loosest = relative ? amount * std::max(std::fabs(g.low), std::fabs(g.high)) : amount;
      if (farthest <= tightest) return Decision::holds;
      if (nearest > loosest) return Decision::fails;
      return Decision::within_noise;
    }
    default: {
      // An ordering holds everywhere when it holds at the corner least favourable to it, and nowhere
      // when it fails at the most favourable one.
      const bool at_high_low = holds(c, o.high, g.low, tolerance), at_low_high = holds(c, o.low, g.high, tolerance);
      if (at_high_low == at_low_high) return of(at_high_low);
      return Decision::within_noise;
    }
  }
}

}  // namespace

// Facts are typed only once read, so whether text meets text and how text compares is checked here
// for them too; values that are not finite numbers are never compared. A measured figure carries
// the interval its true value lies in (analysis/noise.hpp): a guess that holds for part of the
// intervals only is within noise, not a verdict that would flip from one run to the next.
std::variant<bool, NotEvaluable> GuessTree::decide(const Value& observed_value, const Value& guessed_value) const {
  if (observed_value.index() != guessed_value.index())
    return NotEvaluable{fmt::format("cannot compare {} with {}", analysis::format(observed_value), analysis::format(guessed_value))};
  if (const auto* o = std::get_if<std::string>(&observed_value)) {
    const auto& g = std::get<std::string>(guessed_value);
    switch (comparison) {
      case Comparison::equal: return *o == g;
      case Comparison::not_equal: return *o != g;
      case Comparison::approx:
        if (!pattern) return NotEvaluable{regex_needed};
        return pattern->search(*o);
      default: return NotEvaluable{text_comparisons};
    }
  }
  const auto& o = std::get<Quantity>(observed_value);
  const auto& g = std::get<Quantity>(guessed_value);
  for (const auto& [side, v] : {std::pair{"observed", o.value}, std::pair{"guessed", g.value}})
    if (!std::isfinite(v)) return NotEvaluable{fmt::format("the {} value is {}", side, std::isnan(v) ? "not a number" : "infinite")};
  if (!o.interval && !g.interval) return holds(comparison, o.value, g.value, tolerance);
  switch (decide_intervals(comparison, analysis::bounds(o), analysis::bounds(g), tolerance)) {
    case Decision::holds: return true;
    case Decision::fails: return false;
    case Decision::within_noise: break;
  }
  return NotEvaluable{fmt::format("within noise: observed {}, guessed {}: the guess holds for part of these {} intervals only",
                                  analysis::format_with_interval(o), analysis::format_with_interval(g),
                                  util::format_percent(analysis::timing_confidence))};
}

}  // namespace expr::expect
