#include "expect/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/regex.hpp"
#include "util/text.hpp"

namespace expr::expect {

using analysis::Dimension;
using analysis::Display;
using analysis::Quantity;
using analysis::Value;

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::confirmed: return "confirmed";
    case Verdict::contradicted: return "contradicted";
    case Verdict::not_evaluable: return "not evaluable";
  }
  return "?";
}

namespace {

// A regex argument or `~ "regex"`, compiled once here so a bad one is reported where it was written.
void check_regex(const std::string& pattern, std::size_t offset) {
  try {
    util::Regex valid(pattern);
  } catch (const util::RegexError& e) {
    throw SyntaxError(offset, fmt::format("'{}' is not a valid regex: {}", pattern, e.what()));
  }
}

// ---- Binding ----------------------------------------------------------------------------------

std::vector<std::string> names_of(const auto& specs) {
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  return names;
}

void bind_arguments(Reference& ref, const Reference::Segment& seg, const analysis::MetricSpec& spec) {
  const std::vector<Argument> none;
  const auto& args = seg.args ? *seg.args : none;
  if (spec.args.empty() && !args.empty())
    throw SyntaxError(args.front().offset, spec.name + " takes no arguments");
  bool positional_used = false;
  for (const auto& a : args) {
    const analysis::ArgSpec* arg = nullptr;
    if (!a.name) {
      if (positional_used)
        throw SyntaxError(a.offset, fmt::format("only the first argument of {} may go without a name; write name=value "
                                                "(arguments: {})", spec.name, util::one_of(names_of(spec.args))));
      positional_used = true;
      // A bare copy kind (copies(DtoD)) is the kind even when it is not the first argument.
      const bool is_kind = spec.arg("kind") && trace::copy_kind_from(a.value) != trace::CopyKind::unknown;
      arg = is_kind ? spec.arg("kind") : &spec.args.front();
    } else {
      arg = spec.arg(*a.name);
      if (!arg)
        throw SyntaxError(a.offset, fmt::format("{} has no argument '{}'{}", spec.name, *a.name,
                                                util::did_you_mean(*a.name, names_of(spec.args))));
    }
    if (ref.call.args.count(arg->name)) throw SyntaxError(a.offset, fmt::format("argument '{}' given twice", arg->name));
    if (arg->kind == analysis::ArgKind::copy_kind && trace::copy_kind_from(a.value) == trace::CopyKind::unknown) {
      std::vector<std::string> kinds;
      for (int k = 1; k <= static_cast<int>(trace::CopyKind::PtoP); ++k) kinds.emplace_back(trace::to_string(static_cast<trace::CopyKind>(k)));
      throw SyntaxError(a.offset, fmt::format("unknown copy kind '{}'{}; kinds are {}", a.value, util::did_you_mean(a.value, kinds),
                                              util::one_of(kinds)));
    }
    if (arg->kind == analysis::ArgKind::pattern) check_regex(a.value, a.offset);
    ref.call.args[arg->name] = a.value;
  }
  for (const auto& needed : spec.args)
    if (needed.kind == analysis::ArgKind::key && !ref.call.args.count(needed.name))
      throw SyntaxError(seg.offset, fmt::format("{} needs its {} argument, e.g. {}(\"backend\")", spec.name, needed.name, spec.name));
}

void bind_reference(Reference& ref, const std::vector<std::string>& experiments) {
  auto& segs = ref.segments;
  // cold.metric: the same metric over the experiment's cold first call (analysis::cold_prefix).
  if (segs.size() > 1 && segs[0].name == analysis::cold_prefix && !segs[0].args) {
    if (!analysis::find_metric(segs[1].name))
      throw SyntaxError(segs[1].offset, fmt::format("cold. reads a metric of this experiment's own cold call, and '{}' is no metric{}",
                                                    segs[1].name, util::did_you_mean(segs[1].name, analysis::metric_names())));
    ref.call.cold = true;
    segs.erase(segs.begin());
  }
  std::size_t i = 0;
  if (!analysis::find_metric(segs[0].name)) {
    const bool names_experiment = std::find(experiments.begin(), experiments.end(), segs[0].name) != experiments.end();
    if (segs.size() == 1 || segs[0].args || !names_experiment) {
      if (segs.size() > 1 && !segs[0].args)
        throw SyntaxError(segs[0].offset, fmt::format("'{}' is neither a metric nor an experiment of this series{}", segs[0].name,
                                                      util::did_you_mean(segs[0].name, experiments)));
      throw SyntaxError(segs[0].offset, fmt::format("unknown metric '{}'{}", segs[0].name,
                                                    util::did_you_mean(segs[0].name, analysis::metric_names())));
    }
    ref.experiment = segs[0].name;
    i = 1;
    if (!analysis::find_metric(segs[i].name))
      throw SyntaxError(segs[i].offset, fmt::format("unknown metric '{}'{}", segs[i].name,
                                                    util::did_you_mean(segs[i].name, analysis::metric_names())));
  }
  const auto& metric = segs[i];
  const auto& spec = *analysis::find_metric(metric.name);
  ref.call.metric = spec.name;
  bind_arguments(ref, metric, spec);
  if (spec.selector()) {
    if (i + 1 >= segs.size())
      throw SyntaxError(metric.offset, fmt::format("{} picks one {}; add the figure you want: .{}", spec.name, spec.name,
                                                   util::one_of(names_of(spec.fields))));
    const auto& field = segs[i + 1];
    if (field.args) throw SyntaxError(field.offset, fmt::format("figure '{}' takes no arguments", field.name));
    if (!spec.field(field.name))
      throw SyntaxError(field.offset, fmt::format("{} has no figure '{}'{}", spec.name, field.name,
                                                  util::did_you_mean(field.name, names_of(spec.fields))));
    ref.call.field = field.name;
    ++i;
  }
  if (i + 1 < segs.size())
    throw SyntaxError(segs[i + 1].offset, fmt::format("{} has no figure '.{}'", spec.name, segs[i + 1].name));
}

// The kind of value a node yields, known before anything runs.
struct Type {
  enum class Kind { number, text, dynamic } kind = Kind::number;
  Dimension dim;
  Display display = Display::number;
};

std::string describe(const Type& t) {
  if (t.kind == Type::Kind::text) return "text";
  return analysis::describe(t.dim);
}

std::string unit_hint(Dimension d) {
  if (d == analysis::duration) return "; write it with a unit: ns, us, ms or s";
  if (d == analysis::data) return "; write it with a unit: B, KiB, MiB, GiB, KB, MB or GB";
  return "";
}

Type type_of(Node& n, const std::vector<std::string>& experiments) {
  return std::visit(
      [&](auto& e) -> Type {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, Literal>) {
          if (const auto* q = std::get_if<Quantity>(&e.value)) return {Type::Kind::number, q->dim, q->display};
          return {Type::Kind::text, {}, Display::number};
        } else if constexpr (std::is_same_v<E, Reference>) {
          bind_reference(e, experiments);
          const auto& f = analysis::result_type(*analysis::find_metric(e.call.metric), e.call);
          if (f.dynamic) return {Type::Kind::dynamic, {}, Display::number};
          if (f.text) return {Type::Kind::text, {}, Display::number};
          return {Type::Kind::number, f.dim, f.display};
        } else if constexpr (std::is_same_v<E, Negation>) {
          const auto t = type_of(*e.operand, experiments);
          if (t.kind == Type::Kind::text) throw SyntaxError(n.begin, "cannot negate text");
          return t;
        } else {
          const auto l = type_of(*e.lhs, experiments);
          const auto r = type_of(*e.rhs, experiments);
          if (l.kind == Type::Kind::text || r.kind == Type::Kind::text)
            throw SyntaxError(n.begin, fmt::format("cannot compute with text using '{}'", e.op));
          if (l.kind == Type::Kind::dynamic || r.kind == Type::Kind::dynamic) return {Type::Kind::dynamic, {}, Display::number};
          if (e.op == '+' || e.op == '-') {
            if (!(l.dim == r.dim))
              throw SyntaxError(e.rhs->begin, fmt::format("cannot {} {} and {}", e.op == '+' ? "add" : "subtract",
                                                          describe(l), describe(r)));
            return l;
          }
          const int sign = e.op == '*' ? 1 : -1;
          const Dimension d{l.dim.time + sign * r.dim.time, l.dim.bytes + sign * r.dim.bytes};
          return {Type::Kind::number, d, d == l.dim ? l.display : d == r.dim ? r.display : Display::number};
        }
      },
      n.expr);
}

}  // namespace

void bind(Check& check, const std::vector<std::string>& experiments) {
  const auto observed = type_of(*check.observed, experiments);
  const auto guessed = type_of(*check.guessed, experiments);
  using K = Type::Kind;
  if (observed.kind == K::dynamic || guessed.kind == K::dynamic) return;
  if ((observed.kind == K::text) != (guessed.kind == K::text))
    throw SyntaxError(check.guessed->begin, fmt::format("cannot compare {} with {}", describe(observed), describe(guessed)));
  if (observed.kind == K::text) {
    if (check.comparison != Comparison::equal && check.comparison != Comparison::not_equal && check.comparison != Comparison::approx)
      throw SyntaxError(check.guessed->begin, "text compares only with ==, != or ~ (regex search)");
    if (const auto* literal = std::get_if<Literal>(&check.guessed->expr); literal && check.comparison == Comparison::approx)
      check_regex(std::get<std::string>(literal->value), check.guessed->begin);
    return;
  }
  if (!(observed.dim == guessed.dim))
    throw SyntaxError(check.guessed->begin, fmt::format("the observed value is {} but the guess is {}{}", describe(observed),
                                                        describe(guessed), unit_hint(observed.dim)));
  if (check.tolerance && check.tolerance->kind == Tolerance::Kind::absolute) {
    const auto& amount = check.tolerance->amount;
    if (amount.display == Display::percent && guessed.display != Display::percent)
      throw SyntaxError(check.tolerance->offset,
                        "± with a percentage is for guesses written as percentages; for a relative tolerance write `within N%`");
    if (!(amount.dim == guessed.dim))
      throw SyntaxError(check.tolerance->offset, fmt::format("the tolerance is {} but the guess is {}{}", analysis::describe(amount.dim),
                                                             describe(guessed), unit_hint(guessed.dim)));
  }
}

Check compile(std::string_view text, const std::vector<std::string>& experiments) {
  auto check = parse(text);
  bind(check, experiments);
  return check;
}

namespace {

void collect_experiments(const Node& n, std::vector<std::string>& out) {
  std::visit(
      [&](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, Reference>) {
          if (!e.experiment.empty() && std::find(out.begin(), out.end(), e.experiment) == out.end()) out.push_back(e.experiment);
        } else if constexpr (std::is_same_v<E, Negation>) {
          collect_experiments(*e.operand, out);
        } else if constexpr (std::is_same_v<E, Arithmetic>) {
          collect_experiments(*e.lhs, out);
          collect_experiments(*e.rhs, out);
        }
      },
      n.expr);
}

// ---- Judging ------------------------------------------------------------------------------------

struct Evaluation {
  std::optional<Value> value;           // empty when something could not be evaluated
  std::string unavailable;              // why not
  bool absent = false;                  // a selector matched nothing
  std::vector<std::string> evidence;    // one line per metric read
  std::vector<std::string> caveats;
};

class Evaluator {
 public:
  Evaluator(const std::string& text, const outcome::Measurement& self, const FindMeasurement& find)
      : text_(text), self_(self), find_(find) {}

  Value eval(const Node& n, Evaluation& ev) {
    return std::visit(
        [&](const auto& e) -> Value {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, Literal>) {
            return e.value;
          } else if constexpr (std::is_same_v<E, Reference>) {
            return read(n, e, ev);
          } else if constexpr (std::is_same_v<E, Negation>) {
            auto q = number(eval(*e.operand, ev), n, ev);
            q.value = -q.value;
            return q;
          } else {
            const auto l = number(eval(*e.lhs, ev), *e.lhs, ev);
            const auto r = number(eval(*e.rhs, ev), *e.rhs, ev);
            return arithmetic(e.op, l, r);
          }
        },
        n.expr);
  }

 private:
  struct Stop {};  // unwinds evaluation once a value is unavailable

  Value read(const Node& n, const Reference& ref, Evaluation& ev) {
    const outcome::Measurement* m = &self_;
    if (!ref.experiment.empty()) {
      m = find_(ref.experiment);
      if (!m) {
        ev.unavailable = fmt::format("experiment {} is not in this run", ref.experiment);
        throw Stop{};
      }
    }
    const auto outcome = analysis::evaluate(*m, ref.call);
    const auto written = text_.substr(n.begin, n.end - n.begin);
    if (const auto* u = std::get_if<analysis::Unavailable>(&outcome)) {
      ev.unavailable = ref.experiment.empty() ? u->reason : ref.experiment + ": " + u->reason;
      throw Stop{};
    }
    const auto& o = std::get<analysis::Observation>(outcome);
    ev.evidence.push_back(fmt::format("{} = {}: {}", written, analysis::format(o.value), o.evidence));
    ev.caveats.insert(ev.caveats.end(), o.caveats.begin(), o.caveats.end());
    if (o.absent) {
      ev.absent = true;
      throw Stop{};
    }
    return o.value;
  }

  // Facts are typed only once read: a text fact in arithmetic cannot be judged.
  Quantity number(const Value& v, const Node& n, Evaluation& ev) {
    if (const auto* q = std::get_if<Quantity>(&v)) return *q;
    ev.unavailable = fmt::format("'{}' is text (\"{}\"), not a number", text_.substr(n.begin, n.end - n.begin), std::get<std::string>(v));
    throw Stop{};
  }

  static Quantity arithmetic(char op, const Quantity& l, const Quantity& r) {
    switch (op) {
      case '+': return {l.value + r.value, l.dim, l.display};
      case '-': return {l.value - r.value, l.dim, l.display};
      case '*': {
        const Dimension d{l.dim.time + r.dim.time, l.dim.bytes + r.dim.bytes};
        return {l.value * r.value, d, d == l.dim ? l.display : d == r.dim ? r.display : Display::number};
      }
      default: {
        const Dimension d{l.dim.time - r.dim.time, l.dim.bytes - r.dim.bytes};
        return {l.value / r.value, d, d == l.dim ? l.display : Display::number};
      }
    }
  }

 public:
  Evaluation evaluate(const Node& n) {
    Evaluation ev;
    try {
      ev.value = eval(n, ev);
    } catch (const Stop&) {
    }
    return ev;
  }

 private:
  const std::string& text_;
  const outcome::Measurement& self_;
  const FindMeasurement& find_;
};

bool holds(Comparison c, const Value& observed, const Value& guessed, const std::optional<Tolerance>& tolerance) {
  if (const auto* o = std::get_if<std::string>(&observed)) {
    const auto& g = std::get<std::string>(guessed);
    if (c == Comparison::approx) return util::Regex(g).search(*o);
    return (c == Comparison::equal) == (*o == g);
  }
  const double a = std::get<Quantity>(observed).value;
  const double b = std::get<Quantity>(guessed).value;
  const bool same = std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
  switch (c) {
    case Comparison::equal: return same;
    case Comparison::not_equal: return !same;
    case Comparison::less: return a < b && !same;
    case Comparison::less_equal: return a <= b || same;
    case Comparison::greater: return a > b && !same;
    case Comparison::greater_equal: return a >= b || same;
    case Comparison::approx: {
      const double allowed = tolerance->kind == Tolerance::Kind::relative ? tolerance->amount.value * std::fabs(b)
                                                                          : tolerance->amount.value;
      return std::fabs(a - b) <= allowed * (1 + 1e-12);
    }
  }
  return false;
}

std::string tolerance_text(const Tolerance& t) {
  if (t.kind == Tolerance::Kind::relative) return " within " + analysis::format(t.amount);
  return " ± " + analysis::format(t.amount);
}

bool is_literal(const Node& n) { return std::holds_alternative<Literal>(n.expr); }

}  // namespace

std::vector<std::string> referenced_experiments(const Check& check) {
  std::vector<std::string> out;
  collect_experiments(*check.observed, out);
  collect_experiments(*check.guessed, out);
  return out;
}

Judgement judge(const Check& check, const outcome::Measurement& self, const FindMeasurement& find) {
  Evaluator evaluator(check.text, self, find);
  auto observed = evaluator.evaluate(*check.observed);
  auto guessed = evaluator.evaluate(*check.guessed);

  Judgement j;
  for (auto* ev : {&observed, &guessed}) {
    for (auto& e : ev->evidence) j.evidence += (j.evidence.empty() ? "" : "; ") + e;
    j.caveats.insert(j.caveats.end(), ev->caveats.begin(), ev->caveats.end());
  }
  const auto guessed_text = check.text.substr(check.guessed->begin, check.guessed->end - check.guessed->begin);
  j.guessed = std::string(to_string(check.comparison)) + " " + guessed_text;
  if (check.tolerance) j.guessed += tolerance_text(*check.tolerance);

  if (observed.absent || guessed.absent) {
    // The guess names a kernel or copy that did not run: the trace contradicts it.
    j.verdict = Verdict::contradicted;
    j.observed = "none matches";
    return j;
  }
  for (auto* ev : {&observed, &guessed})
    if (!ev->value) {
      j.verdict = Verdict::not_evaluable;
      j.reason = ev->unavailable;
      return j;
    }
  j.observed = analysis::format(*observed.value);
  if (!is_literal(*check.guessed))
    j.guessed = std::string(to_string(check.comparison)) + " " + analysis::format(*guessed.value) + " (" + guessed_text + ")" +
                (check.tolerance ? tolerance_text(*check.tolerance) : "");
  if (observed.value->index() != guessed.value->index()) {
    j.verdict = Verdict::not_evaluable;
    j.reason = fmt::format("cannot compare {} with {}", analysis::format(*observed.value), analysis::format(*guessed.value));
    return j;
  }
  try {
    j.verdict = holds(check.comparison, *observed.value, *guessed.value, check.tolerance) ? Verdict::confirmed : Verdict::contradicted;
  } catch (const util::RegexError& e) {  // a regex read from the trace or another experiment, not written in the guess
    j.verdict = Verdict::not_evaluable;
    j.reason = fmt::format("'{}' is not a valid regex: {}", analysis::format(*guessed.value), e.what());
  }
  return j;
}

}  // namespace expr::expect
