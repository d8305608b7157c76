// Guesses about a whole sweep (sweep.hpp): reading them, and judging them over the sweep's points.
#include "expect/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "series/plan.hpp"
#include "util/text.hpp"

namespace expr::expect {

namespace {

struct Arg {
  std::string text;
  std::size_t offset;
};

// The arguments between the parentheses at `open`, split at commas outside nested parentheses and
// quotes; `close` is set to the closing parenthesis.
std::vector<Arg> arguments(const std::string& s, std::size_t open, std::size_t& close) {
  std::vector<Arg> out;
  int depth = 0;
  bool quoted = false;
  std::size_t start = open + 1;
  for (std::size_t i = open + 1; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '(') ++depth;
    else if ((c == ',' && depth == 0) || (c == ')' && depth-- == 0)) {
      auto text = s.substr(start, i - start);
      const auto lead = text.find_first_not_of(' ');
      text = lead == std::string::npos ? "" : text.substr(lead, text.find_last_not_of(' ') - lead + 1);
      out.push_back({text, start + (lead == std::string::npos ? 0 : lead)});
      start = i + 1;
      if (c == ')') {
        close = i;
        return out;
      }
    }
  }
  throw SyntaxError(open, "unbalanced parenthesis");
}

double parse_number(const std::string& text, std::size_t offset) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw SyntaxError(offset, fmt::format("'{}' is not a number", text));
}

void parse_guessed(CompiledSweepGuess& g, const std::string& tail, std::size_t offset) {
  static const std::regex re(R"(\s*(==|!=|<=|>=|<|>|~)\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)\s*(?:(?:±|\+-)\s*([0-9.]+(?:[eE][-+]?[0-9]+)?)|within\s+([0-9.]+)\s*%)?\s*)");
  std::smatch m;
  if (!std::regex_match(tail, m, re))
    throw SyntaxError(offset, "expected a comparison with a number after the call, e.g. ~ 2 ± 0.3, ~ 2048 within 50%, < 2.5");
  const std::string op = m[1];
  g.comparison = op == "==" ? Comparison::equal : op == "!=" ? Comparison::not_equal : op == "<" ? Comparison::less
               : op == "<=" ? Comparison::less_equal : op == ">" ? Comparison::greater : op == ">=" ? Comparison::greater_equal
                                                                                                    : Comparison::approx;
  g.guessed = parse_number(m[2], offset);
  if (m[3].matched) g.absolute = parse_number(m[3], offset);
  if (m[4].matched) g.relative = parse_number(m[4], offset) / 100;
  if (g.comparison == Comparison::approx && !g.absolute && !g.relative)
    throw SyntaxError(offset, "~ needs a tolerance: ~ 2 ± 0.3 or ~ 2048 within 50%");
  if (g.comparison != Comparison::approx && (g.absolute || g.relative))
    throw SyntaxError(offset, "a tolerance goes with ~ only");
  g.guessed_text = tail.substr(tail.find_first_not_of(' '));
}

bool holds(const CompiledSweepGuess& g, double observed) {
  const double close = 1e-9 * std::max(std::fabs(observed), std::fabs(g.guessed));
  switch (g.comparison) {
    case Comparison::equal: return std::fabs(observed - g.guessed) <= close;
    case Comparison::not_equal: return std::fabs(observed - g.guessed) > close;
    case Comparison::less: return observed < g.guessed;
    case Comparison::less_equal: return observed <= g.guessed + close;
    case Comparison::greater: return observed > g.guessed;
    case Comparison::greater_equal: return observed >= g.guessed - close;
    case Comparison::approx:
      return std::fabs(observed - g.guessed) <= (g.absolute ? *g.absolute : *g.relative * std::fabs(g.guessed)) + close;
  }
  return false;
}

const ParamValue* value_of(const series::AxisPoint& point, const std::string& axis) {
  const auto it = std::find_if(point.begin(), point.end(), [&](const auto& kv) { return kv.first == axis; });
  return it == point.end() ? nullptr : &it->second;
}

std::optional<double> numeric(const ParamValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

// One point of a group with its metric read.
struct Sample {
  double x = 0;
  double y = 0;
  std::string label;  // "seq=2048: 1.2 ms"
};

// The group's samples in axis order, and why the others could not be read.
struct Series {
  std::vector<Sample> samples;
  std::vector<std::string> missing;
};

Series read_metric(const CompiledSweepGuess& g, const std::vector<const SweepPoint*>& points) {
  Series s;
  for (const auto* p : points) {
    const auto x = numeric(*value_of(*p->point, g.axis));
    const auto where = fmt::format("{}={}", g.axis, series::to_string(*value_of(*p->point, g.axis)));
    if (!x) {
      s.missing.push_back(fmt::format("axis {} is not a number", g.axis));
      continue;
    }
    if (!p->measurement) {
      s.missing.push_back(fmt::format("{}: did not run", where));
      continue;
    }
    const auto outcome = analysis::evaluate(*p->measurement, g.metric);
    if (const auto* u = std::get_if<analysis::Unavailable>(&outcome)) {
      s.missing.push_back(fmt::format("{}: {}", where, u->reason));
      continue;
    }
    const auto& o = std::get<analysis::Observation>(outcome);
    const auto* q = std::get_if<analysis::Quantity>(&o.value);
    if (!q || o.absent) {
      s.missing.push_back(fmt::format("{}: {} is not a number here", where, g.metric_text));
      continue;
    }
    s.samples.push_back({*x, q->value, fmt::format("{}: {}", where, analysis::format(o.value))});
  }
  std::sort(s.samples.begin(), s.samples.end(), [](const Sample& a, const Sample& b) { return a.x < b.x; });
  return s;
}

std::string labels(const std::vector<Sample>& samples) {
  std::vector<std::string> out;
  for (const auto& s : samples) out.push_back(s.label);
  return fmt::format("{}", fmt::join(out, ", "));
}

Judgement not_evaluable(const std::string& reason, const Series& s) {
  Judgement j;
  j.reason = s.missing.empty() ? reason : fmt::format("{} ({})", reason, fmt::join(s.missing, "; "));
  j.evidence = labels(s.samples);
  return j;
}

Judgement verdict(const CompiledSweepGuess& g, double observed, std::string evidence) {
  Judgement j;
  j.verdict = holds(g, observed) ? Verdict::confirmed : Verdict::contradicted;
  j.observed = fmt::format("{:.4g}", observed);
  j.guessed = g.guessed_text;
  j.evidence = std::move(evidence);
  return j;
}

SweepJudgement slope(const CompiledSweepGuess& g, Series s) {
  std::erase_if(s.samples, [&](const Sample& p) { return (g.from && p.x < *g.from) || (g.to && p.x > *g.to) || p.x <= 0 || p.y <= 0; });
  if (s.samples.size() < 2) return {{}, not_evaluable(fmt::format("a slope needs two points or more with positive values, {} here", s.samples.size()), s), {}};
  double mx = 0, my = 0;
  for (const auto& p : s.samples) mx += std::log(p.x), my += std::log(p.y);
  mx /= double(s.samples.size());
  my /= double(s.samples.size());
  double covariance = 0, variance = 0;
  for (const auto& p : s.samples) {
    covariance += (std::log(p.x) - mx) * (std::log(p.y) - my);
    variance += (std::log(p.x) - mx) * (std::log(p.x) - mx);
  }
  if (variance == 0) return {{}, not_evaluable("every point has the same axis value", s), {}};
  const double fitted = covariance / variance;
  SweepGeometry drawn;
  drawn.fit = SweepGeometry::Fit{fitted, my - fitted * mx, s.samples.front().x, s.samples.back().x};
  return {{}, verdict(g, fitted, fmt::format("log-log fit over {} points: {}", s.samples.size(), labels(s.samples))), drawn};
}

SweepJudgement monotonic(const CompiledSweepGuess& g, const Series& s) {
  if (s.samples.size() < 2) return {{}, not_evaluable(fmt::format("needs two points or more, {} here", s.samples.size()), s), {}};
  SweepJudgement out;
  auto& j = out.judgement;
  j.verdict = Verdict::confirmed;
  j.guessed = g.increasing ? "increasing" : "decreasing";
  j.observed = j.guessed;
  j.evidence = labels(s.samples);
  for (std::size_t i = 1; i < s.samples.size(); ++i)
    if (g.increasing ? s.samples[i].y < s.samples[i - 1].y : s.samples[i].y > s.samples[i - 1].y) {
      j.verdict = Verdict::contradicted;
      j.observed = fmt::format("{} from {} to {}", g.increasing ? "falls" : "rises", s.samples[i - 1].label, s.samples[i].label);
      out.geometry.broken = std::pair{s.samples[i - 1].x, s.samples[i].x};
      break;
    }
  return out;
}

SweepJudgement crossover(const CompiledSweepGuess& g, const Series& mine, const Series& theirs) {
  struct Both {
    double x, mine, theirs;
  };
  std::vector<Both> both;
  std::vector<std::string> evidence;
  for (const auto& a : mine.samples)
    for (const auto& b : theirs.samples)
      if (a.x == b.x) {
        both.push_back({a.x, a.y, b.y});
        evidence.push_back(fmt::format("{} vs {}", a.label, b.label.substr(b.label.find(':') + 2)));
      }
  Series missing{{}, mine.missing};
  missing.missing.insert(missing.missing.end(), theirs.missing.begin(), theirs.missing.end());
  if (both.size() < 2) return {{}, not_evaluable(fmt::format("a crossover needs two axis values measured in both {} and {}", g.family, g.other), missing), {}};
  const auto shown = fmt::format("{} vs {}: {}", g.family, g.other, fmt::join(evidence, ", "));
  for (std::size_t i = 1; i < both.size(); ++i) {
    const auto& a = both[i - 1];
    const auto& b = both[i];
    const double d0 = a.mine - a.theirs, d1 = b.mine - b.theirs;
    if ((d0 < 0) != (d1 < 0) && a.x > 0 && b.x > 0) {
      // Where the difference, linear between the two points along log(axis), reaches zero.
      const double t = d0 / (d0 - d1);
      const double at = std::exp(std::log(a.x) + (std::log(b.x) - std::log(a.x)) * t);
      SweepGeometry drawn;
      drawn.crossing = std::pair{at, a.mine + (b.mine - a.mine) * t};
      return {{}, verdict(g, at, shown), drawn};
    }
  }
  SweepJudgement out;
  auto& j = out.judgement;
  j.verdict = Verdict::contradicted;
  j.observed = fmt::format("no crossover: {} stays {} {} from {}={} to {}", g.family, both.front().mine < both.front().theirs ? "below" : "above",
                           g.other, g.axis, both.front().x, both.back().x);
  j.guessed = g.guessed_text;
  j.evidence = shown;
  return out;
}

}  // namespace

std::optional<CompiledSweepGuess> compile_sweep_guess(const series::GuessSpec& spec, const std::string& family,
                                              const std::vector<std::string>& axes, const std::vector<std::string>& families,
                                              std::vector<util::Problem>& problems) {
  CompiledSweepGuess g;
  g.spec = spec;
  g.family = family;
  const auto& text = spec.check;
  try {
    bound_length(text);
    // `kind(`, the kind a lower-case word.
    const auto kind_begin = std::min(text.find_first_not_of(" \t\r\n"), text.size());
    auto kind_end = kind_begin;
    while (kind_end < text.size() && ((text[kind_end] >= 'a' && text[kind_end] <= 'z') || text[kind_end] == '_')) ++kind_end;
    const auto open = std::min(text.find_first_not_of(" \t\r\n", kind_end), text.size());
    if (kind_end == kind_begin || open == text.size() || text[open] != '(')
      throw SyntaxError(0, "a sweep guess is slope(...), monotonic(...) or crossover(...)");
    const auto kind = text.substr(kind_begin, kind_end - kind_begin);
    if (kind != "slope" && kind != "monotonic" && kind != "crossover")
      throw SyntaxError(kind_begin, kind_end, fmt::format("unknown sweep guess '{}'{}; it is slope, monotonic or crossover", kind,
                                                          util::did_you_mean(kind, {"slope", "monotonic", "crossover"})));
    g.kind = kind == "slope" ? CompiledSweepGuess::Kind::slope : kind == "monotonic" ? CompiledSweepGuess::Kind::monotonic : CompiledSweepGuess::Kind::crossover;
    std::size_t close = 0;
    auto args = arguments(text, open, close);
    if (args.size() < 2 || args[0].text.empty())
      throw SyntaxError(close, fmt::format("{} takes a metric and an axis first: {}(gpu_time, seq{}", kind, kind,
                                           kind == "slope" ? ")" : kind == "monotonic" ? ", increasing)" : ", other_experiment)"));
    // The metric, bound by the expectation language itself.
    g.metric_text = args[0].text;
    try {
      const auto check = compile(g.metric_text + " == " + g.metric_text, {});
      const auto* ref = dynamic_cast<const Reference*>(check.observed.get());
      if (!ref) throw SyntaxError(0, g.metric_text.size(), "the metric of a sweep guess is one metric, such as gpu_time or kernel(\"gemm\").duration");
      g.metric = ref->call;
    } catch (const SyntaxError& e) {
      const auto within = [&](std::size_t offset) { return args[0].offset + std::min(offset, g.metric_text.size()); };
      throw SyntaxError(within(e.offset()), within(e.end()), e.what());
    }
    g.axis = args[1].text;
    if (std::find(axes.begin(), axes.end(), g.axis) == axes.end())
      throw SyntaxError(args[1].offset, fmt::format("'{}' is not an axis of {}{}{}", g.axis, family, util::did_you_mean(g.axis, axes),
                                                    axes.empty() ? " (it has none)" : fmt::format(" (axes: {})", fmt::join(axes, ", "))));
    const auto tail = text.substr(close + 1);
    if (g.kind == CompiledSweepGuess::Kind::slope) {
      for (std::size_t i = 2; i < args.size(); ++i) {
        const auto eq = args[i].text.find('=');
        const auto key = args[i].text.substr(0, eq);
        if (eq == std::string::npos || (key != "from" && key != "to"))
          throw SyntaxError(args[i].offset, "slope takes from=VALUE and to=VALUE after the axis");
        (key == "from" ? g.from : g.to) = parse_number(args[i].text.substr(eq + 1), args[i].offset + eq + 1);
      }
      parse_guessed(g, tail, close + 1);
    } else if (g.kind == CompiledSweepGuess::Kind::monotonic) {
      if (args.size() != 3 || (args[2].text != "increasing" && args[2].text != "decreasing"))
        throw SyntaxError(args.size() > 2 ? args[2].offset : close, "monotonic takes increasing or decreasing after the axis");
      g.increasing = args[2].text == "increasing";
      if (tail.find_first_not_of(' ') != std::string::npos) throw SyntaxError(close + 1, "monotonic(...) is a guess on its own, with no comparison");
    } else {
      if (args.size() != 3) throw SyntaxError(close, "crossover takes the experiment it is compared with after the axis");
      g.other = args[2].text;
      if (g.other == family || std::find(families.begin(), families.end(), g.other) == families.end())
        throw SyntaxError(args[2].offset, fmt::format("'{}' is not another experiment of this series{}", g.other, util::did_you_mean(g.other, families)));
      parse_guessed(g, tail, close + 1);
    }
  } catch (const SyntaxError& err) {
    problems.push_back(spec.written.problem(err.offset(), err.end(), err.what()));
    return std::nullopt;
  }
  return g;
}

std::vector<SweepJudgement> judge_sweep(const CompiledSweepGuess& g, const std::vector<SweepPoint>& points) {
  // Groups of this family's points that share the values of every axis but the swept one.
  const auto group_of = [&](const SweepPoint& p) {
    std::vector<std::string> parts;
    for (const auto& [axis, value] : *p.point)
      if (axis != g.axis) parts.push_back(axis + "=" + series::to_string(value));
    return fmt::format("{}", fmt::join(parts, ","));
  };
  std::vector<std::string> order;
  std::map<std::string, std::vector<const SweepPoint*>> groups;
  for (const auto& p : points)
    if (p.family == g.family && value_of(*p.point, g.axis)) {
      const auto key = group_of(p);
      if (!groups.count(key)) order.push_back(key);
      groups[key].push_back(&p);
    }

  std::vector<SweepJudgement> out;
  for (const auto& key : order) {
    const auto mine = read_metric(g, groups[key]);
    switch (g.kind) {
      case CompiledSweepGuess::Kind::slope: out.push_back(slope(g, mine)); break;
      case CompiledSweepGuess::Kind::monotonic: out.push_back(monotonic(g, mine)); break;
      case CompiledSweepGuess::Kind::crossover: {
        // The other family's points with this group's values on the axes both have.
        std::vector<const SweepPoint*> theirs;
        for (const auto& p : points) {
          if (p.family != g.other || !value_of(*p.point, g.axis)) continue;
          const auto& reference = *groups[key].front()->point;
          const bool same = std::all_of(p.point->begin(), p.point->end(), [&](const auto& kv) {
            const auto* v = value_of(reference, kv.first);
            return kv.first == g.axis || !v || *v == kv.second;
          });
          if (same) theirs.push_back(&p);
        }
        out.push_back(crossover(g, mine, read_metric(g, theirs)));
        break;
      }
    }
    out.back().group = key;
  }
  if (out.empty()) {
    Judgement j;
    j.reason = fmt::format("no point of {} ran with axis {}", g.family, g.axis);
    out.push_back({"", j, {}});
  }
  return out;
}

}  // namespace expr::expect
