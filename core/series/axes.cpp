// Sweep axes: reading `axes:`, `zip:` and `exclude:`, the --axis option, and the expansion of an
// experiment into its points.
#include "series/axes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include "series/plan.hpp"
#include "util/text.hpp"

namespace expr::series {

namespace {

std::int64_t whole_number(const std::string& text, const std::string& what) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) throw std::invalid_argument(fmt::format("{} must be a whole number, not '{}'", what, util::shortened(text)));
  return v;
}

// A scalar or a list of scalars, each with its place.
std::vector<Located<std::string>> scalars(const YAML::Node& n, NodeReader& reader, const std::string& what) {
  std::vector<Located<std::string>> out;
  const auto one = [&](const YAML::Node& v) {
    if (v.IsScalar()) out.push_back({v.Scalar(), reader.pos(v)});
    else reader.problem(reader.pos(v), fmt::format("{} must be single values, not a {}", what, v.IsMap() ? "mapping" : "list"));
  };
  if (n.IsSequence()) for (const auto& v : n) one(v);
  else one(n);
  return out;
}

// An exclusion's condition on one value: equal to it, or a comparison for numeric parameters.
struct Condition {
  std::string op;  // "" for equality
  ParamValue value;
  bool matches(const ParamValue& v) const {
    if (op.empty()) return v == value;
    const auto number = [](const ParamValue& p) { return std::holds_alternative<std::int64_t>(p) ? double(std::get<std::int64_t>(p)) : std::get<double>(p); };
    const double a = number(v), b = number(value);
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    if (op == ">=") return a >= b;
    return a != b;  // "!="
  }
};

// `text` without the white space around it.
std::string_view trimmed(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

Condition condition(const ParamSpec& spec, const std::string& text) {
  const auto written = trimmed(text);
  for (const std::string_view op : {"<=", ">=", "!=", "<", ">"})
    if (written.substr(0, op.size()) == op) {
      if (spec.type != ParamType::integer && spec.type != ParamType::number)
        throw std::invalid_argument(fmt::format("'{}' compares, but parameter '{}' is not a number", util::shortened(text), spec.name));
      return {std::string(op), typed_param(spec, std::string(trimmed(written.substr(op.size()))))};
    }
  return {"", typed_param(spec, text)};
}

// `kind(arguments)`: the arguments of a generator call, or nothing when `text` is not one.
std::optional<std::string> generator_arguments(std::string_view text, std::string_view kind) {
  const auto written = trimmed(text);
  if (written.substr(0, kind.size()) != kind) return std::nullopt;
  const auto call = trimmed(written.substr(kind.size()));
  if (call.size() < 2 || call.front() != '(' || call.back() != ')') return std::nullopt;
  return std::string(call.substr(1, call.size() - 2));
}

// A generator counted to more values than `limit`, refused before any is made.
std::invalid_argument too_many_values(const std::string& text, const std::string& count, std::size_t limit) {
  return std::invalid_argument(fmt::format("'{}' expands to {} values, more than max_points ({}); narrow it, or raise 'max_points' "
                                           "at the top of the series file (at most {})",
                                           util::shortened(text), count, limit, max_points_ceiling));
}

}  // namespace

std::vector<std::string> axis_values(const std::string& text, std::size_t limit) {
  std::string kind, arguments;
  for (const std::string_view generator : {"range", "pow2"})
    if (auto written = generator_arguments(text, generator); written && kind.empty()) {
      kind = generator;
      arguments = std::move(*written);
    }
  if (kind.empty()) return {text};
  std::vector<std::int64_t> args;
  for (std::size_t start = 0; start <= arguments.size();) {
    const auto comma = std::min(arguments.find(',', start), arguments.size());
    auto arg = arguments.substr(start, comma - start);
    arg.erase(0, arg.find_first_not_of(' '));
    arg.erase(arg.find_last_not_of(' ') + 1);
    args.push_back(whole_number(arg, fmt::format("an argument of {}()", kind)));
    start = comma + 1;
  }
  std::vector<std::string> out;
  if (kind == "range") {
    if (args.size() != 3) throw std::invalid_argument("range takes three whole numbers: range(start, stop, step), stop included");
    if (args[2] <= 0) throw std::invalid_argument("the step of range() must be positive");
    if (args[0] <= args[1]) {
      // Counted in unsigned arithmetic, which holds any stop - start, before anything is made; each
      // value is start + i * step, which never passes stop, so nothing overflows near its limits.
      const auto span = static_cast<std::uint64_t>(args[1]) - static_cast<std::uint64_t>(args[0]);
      const auto step = static_cast<std::uint64_t>(args[2]);
      const auto last = span / step;  // the values are i = 0 .. last
      if (last >= limit) throw too_many_values(text, last < UINT64_MAX ? fmt::format("{}", last + 1) : std::string("2^64"), limit);
      for (std::uint64_t i = 0; i <= last; ++i)
        out.push_back(std::to_string(static_cast<std::int64_t>(static_cast<std::uint64_t>(args[0]) + i * step)));
    }
  } else {
    if (args.size() != 2) throw std::invalid_argument("pow2 takes two whole numbers: pow2(start, stop), both included");
    if (args[0] <= 0 || args[1] <= 0)
      throw std::invalid_argument(fmt::format("the bounds of pow2() must be positive: '{}' has {}", util::shortened(text),
                                              args[0] <= 0 ? "start " + std::to_string(args[0]) : "stop " + std::to_string(args[1])));
    // Counted by exponent before any value is made, like range(): the exponents of the powers
    // between start and stop, which never passes 2^62 (the largest power an int64 holds), so no
    // doubling overflows whatever stop is.
    const auto ceiling_exponent = [](std::uint64_t v) { return v <= 1 ? 0 : 64 - __builtin_clzll(v - 1); };  // 2^e >= v
    const auto floor_exponent = [](std::uint64_t v) { return 63 - __builtin_clzll(v); };                     // 2^e <= v
    const int first = ceiling_exponent(static_cast<std::uint64_t>(args[0]));
    const int last = floor_exponent(static_cast<std::uint64_t>(args[1]));
    if (last >= first && static_cast<std::size_t>(last - first) >= limit) throw too_many_values(text, std::to_string(last - first + 1), limit);
    for (int e = first; e <= last; ++e) out.push_back(std::to_string(std::int64_t{1} << e));
  }
  if (out.empty()) throw std::invalid_argument(fmt::format("'{}' expands to zero points", util::shortened(text)));
  return out;
}

void read_axes(const YAML::Node& n, NodeReader& reader, bool from_defaults, std::size_t max_points, std::vector<AxisSpec>& out) {
  if (!n.IsMap()) {
    reader.problem(reader.pos(n), "axes must be a mapping: a parameter, then its values (a list, range(...) or pow2(...))");
    return;
  }
  for (const auto& kv : n) {
    const auto name = reader.key_text(kv.first);
    if (!name) continue;
    AxisSpec axis{{*name, reader.pos(kv.first)}, {}, from_defaults};
    for (const auto& written : scalars(kv.second, reader, "axis values")) {
      try {
        for (auto& v : axis_values(written.value, max_points)) axis.values.push_back({std::move(v), written.pos});
      } catch (const std::invalid_argument& e) {
        reader.problem(written.pos, e.what());
      }
    }
    if (axis.values.empty() && kv.second.IsSequence() && kv.second.size() == 0)
      reader.problem(axis.name.pos, fmt::format("axis '{}' has no values: it would expand to zero points", axis.name.value));
    auto same = std::find_if(out.begin(), out.end(), [&](const AxisSpec& a) { return a.name.value == axis.name.value; });
    if (same != out.end()) *same = std::move(axis);  // the experiment's own replaces the default, in place
    else out.push_back(std::move(axis));
  }
}

void read_zip(const YAML::Node& n, NodeReader& reader, std::vector<std::vector<Located<std::string>>>& out) {
  if (!n.IsSequence()) {
    reader.problem(reader.pos(n), "zip must be a list of groups of axes that move together, e.g. zip: [[seq, batch]]");
    return;
  }
  for (const auto& group : n) {
    if (!group.IsSequence() || group.size() < 2) {
      reader.problem(reader.pos(group), "each zip group is a list of two or more axes, e.g. [seq, batch]");
      continue;
    }
    out.push_back(scalars(group, reader, "zip entries"));
  }
}

void read_exclude(const YAML::Node& n, NodeReader& reader, std::vector<Exclusion>& out) {
  if (!n.IsSequence()) {
    reader.problem(reader.pos(n), "exclude must be a list of mappings, e.g. exclude: [{seq: \">4096\", dtype: fp32}]");
    return;
  }
  for (const auto& e : n) {
    if (!e.IsMap() || e.size() == 0) {
      reader.problem(reader.pos(e), "an exclusion is a mapping from axes to the values it leaves out, e.g. {seq: \">4096\", dtype: fp32}");
      continue;
    }
    Exclusion x;
    for (const auto& kv : e)
      if (const auto axis = reader.key_text(kv.first))
        x.conditions.emplace_back(Located<std::string>{*axis, reader.pos(kv.first)}, scalars(kv.second, reader, "excluded values"));
    out.push_back(std::move(x));
  }
}

AxisOverride parse_axis_override(const std::string& option) {
  const auto eq = option.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == option.size())
    throw std::invalid_argument(fmt::format("--axis {}: write --axis NAME=VALUE,VALUE,... (or NAME=range(a,b,step), NAME=pow2(a,b))", option));
  AxisOverride out{"--axis " + option, option.substr(0, eq), {}};
  const auto values = option.substr(eq + 1);
  try {
    // A generator has commas of its own; the series' own max_points is checked when it expands.
    if (values.find('(') != std::string::npos) out.values = axis_values(values, max_points_ceiling);
    else
      for (std::size_t start = 0; start <= values.size();) {
        const auto comma = std::min(values.find(',', start), values.size());
        if (comma == start) throw std::invalid_argument("an empty value");
        out.values.push_back(values.substr(start, comma - start));
        start = comma + 1;
      }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", out.option, e.what()));
  }
  return out;
}

std::vector<AxisPoint> expand(const ExperimentSpec& x, const Description& plugin, const std::vector<AxisOverride>& overrides,
                              std::size_t max_points, std::vector<util::Problem>& problems) {
  const auto before = problems.size();
  std::vector<std::string> param_names;
  for (const auto& p : plugin.params) param_names.push_back(p.name);
  const auto spec_of = [&](const std::string& name) -> const ParamSpec* {
    const auto it = std::find_if(plugin.params.begin(), plugin.params.end(), [&](const ParamSpec& p) { return p.name == name; });
    return it == plugin.params.end() ? nullptr : &*it;
  };

  // The axes that apply: the file's, where the plugin declares them, then the options'.
  std::vector<AxisSpec> axes;
  std::set<std::string> overridden;
  for (const auto& a : x.axes) {
    if (spec_of(a.name.value)) axes.push_back(a);
    else if (!a.from_defaults)
      problems.push_back({a.name.pos, fmt::format("plugin {} has no parameter '{}'{} (parameters: {})", plugin.name, util::shortened(a.name.value),
                                                  util::did_you_mean(a.name.value, param_names), fmt::join(param_names, ", "))});
  }
  for (const auto& o : overrides) {
    if (!spec_of(o.name)) continue;
    AxisSpec axis{{o.name, {o.option, 0, 0}}, {}, false};
    for (const auto& v : o.values) axis.values.push_back({v, {o.option, 0, 0}});
    auto same = std::find_if(axes.begin(), axes.end(), [&](const AxisSpec& a) { return a.name.value == o.name; });
    if (same != axes.end()) *same = std::move(axis);
    else axes.push_back(std::move(axis));
    overridden.insert(o.name);
  }
  if (axes.empty()) return problems.size() == before ? std::vector<AxisPoint>{{}} : std::vector<AxisPoint>{};

  std::vector<std::string> axis_names;
  std::vector<std::vector<ParamValue>> values(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    axis_names.push_back(axes[i].name.value);
    const auto& spec = *spec_of(axes[i].name.value);
    for (const auto& v : axes[i].values) {
      try {
        values[i].push_back(typed_param(spec, v.value));
      } catch (const std::invalid_argument& e) {
        problems.push_back({v.pos, e.what()});
      }
    }
  }
  const auto axis_index = [&](const Located<std::string>& name, const char* where) -> std::optional<std::size_t> {
    const auto it = std::find(axis_names.begin(), axis_names.end(), name.value);
    if (it != axis_names.end()) return static_cast<std::size_t>(it - axis_names.begin());
    problems.push_back({name.pos, fmt::format("{} names '{}', which is not an axis of {}{} (axes: {})", where, util::shortened(name.value), x.name.value,
                                              util::did_you_mean(name.value, axis_names), fmt::join(axis_names, ", "))});
    return std::nullopt;
  };

  // Zip groups: each axis of a group moves with the group's first; lengths must agree.
  std::vector<std::size_t> leader(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) leader[i] = i;
  std::set<std::size_t> zipped;
  for (const auto& group : x.zip) {
    std::vector<std::size_t> members;
    for (const auto& name : group)
      if (const auto i = axis_index(name, "zip")) {
        if (!zipped.insert(*i).second) problems.push_back({name.pos, fmt::format("axis '{}' is in two zip groups", name.value)});
        else members.push_back(*i);
      }
    if (members.size() < 2) continue;
    const auto first = *std::min_element(members.begin(), members.end());
    for (const auto i : members) {
      leader[i] = first;
      if (axes[i].values.size() != axes[first].values.size())
        problems.push_back({group.front().pos, fmt::format("zip: axes '{}' ({} values) and '{}' ({} values) must have as many values to move together",
                                                           axis_names[first], axes[first].values.size(), axis_names[i], axes[i].values.size())});
    }
  }

  // Exclusions, typed like the axes they name.
  std::vector<std::vector<std::pair<std::size_t, std::vector<Condition>>>> exclusions;
  for (const auto& e : x.exclude) {
    auto& conditions = exclusions.emplace_back();
    for (const auto& [name, written] : e.conditions) {
      const auto i = axis_index(name, "exclude");
      if (!i) continue;
      auto& c = conditions.emplace_back(*i, std::vector<Condition>{});
      for (const auto& w : written) {
        try {
          c.second.push_back(condition(*spec_of(name.value), w.value));
          const auto& listed = values[*i];
          if (c.second.back().op.empty() && !overridden.count(name.value) &&
              std::find(listed.begin(), listed.end(), c.second.back().value) == listed.end())
            problems.push_back({w.pos, fmt::format("exclude: {} is not a value of axis '{}', so this leaves nothing out", util::shortened(w.value), name.value)});
        } catch (const std::invalid_argument& err) {
          problems.push_back({w.pos, err.what()});
        }
      }
    }
  }
  if (problems.size() != before) return {};

  // The product: an odometer over the leaders, the last axis turning fastest. Its size is known
  // before it turns, so a product too large is refused before it is made.
  std::vector<std::size_t> leaders;
  std::size_t product = 1;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (leader[i] == i) {
      leaders.push_back(i);
      product = values[i].size() > max_points / product ? max_points + 1 : product * values[i].size();
    }
  if (product > max_points) {
    problems.push_back({axes.front().name.pos, fmt::format("the axes of {} combine into more than max_points ({}) points before exclusions; "
                                                           "narrow them, or raise 'max_points' at the top of the series file (at most {})",
                                                           x.name.value, max_points, max_points_ceiling)});
    return {};
  }
  std::vector<std::size_t> digit(axes.size(), 0);
  std::vector<AxisPoint> points;
  for (bool more = true; more;) {
    AxisPoint point;
    for (std::size_t i = 0; i < axes.size(); ++i) point.emplace_back(axis_names[i], values[i][digit[leader[i]]]);
    const bool excluded = std::any_of(exclusions.begin(), exclusions.end(), [&](const auto& conditions) {
      return !conditions.empty() && std::all_of(conditions.begin(), conditions.end(), [&](const auto& c) {
        return std::any_of(c.second.begin(), c.second.end(), [&](const Condition& k) { return k.matches(point[c.first].second); });
      });
    });
    if (!excluded) points.push_back(std::move(point));
    more = false;
    for (auto l = leaders.rbegin(); l != leaders.rend(); ++l) {
      if (++digit[*l] < values[*l].size()) {
        more = true;
        break;
      }
      digit[*l] = 0;
    }
  }
  if (points.empty())
    problems.push_back({x.name.pos, fmt::format("the sweep of {} expands to zero points: every point is excluded", x.name.value)});
  return points;
}

std::string identity(const std::string& family, const AxisPoint& point) {
  if (point.empty()) return family;
  std::vector<std::string> parts;
  for (const auto& [name, value] : point) parts.push_back(name + "=" + to_string(value));
  return fmt::format("{}[{}]", family, fmt::join(parts, ","));
}

}  // namespace expr::series
