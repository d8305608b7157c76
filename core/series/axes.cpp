// Sweep axes: reading `axes:`, `zip:` and `exclude:`, the --axis option, and the expansion of an
// experiment into its points.
#include "series/axes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "series/plan.hpp"
#include "util/regex.hpp"
#include "util/text.hpp"

namespace expr::series {

namespace {

util::SourcePos at(const std::string& file, const YAML::Node& n) {
  const auto m = n.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

std::int64_t whole_number(const std::string& text, const std::string& what) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) throw std::invalid_argument(fmt::format("{} must be a whole number, not '{}'", what, text));
  return v;
}

// A scalar or a list of scalars, each with its place.
std::vector<Located<std::string>> scalars(const YAML::Node& n, const std::string& file, const std::string& what,
                                          std::vector<util::Problem>& problems) {
  std::vector<Located<std::string>> out;
  const auto one = [&](const YAML::Node& v) {
    if (v.IsScalar()) out.push_back({v.Scalar(), at(file, v)});
    else problems.push_back({at(file, v), fmt::format("{} must be single values, not a {}", what, v.IsMap() ? "mapping" : "list")});
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

Condition condition(const ParamSpec& spec, const std::string& text) {
  static const util::Regex comparison(R"(\s*(<=|>=|!=|<|>)\s*(.*))");
  if (const auto m = comparison.full_match(text)) {
    if (spec.type != ParamType::integer && spec.type != ParamType::number)
      throw std::invalid_argument(fmt::format("'{}' compares, but parameter '{}' is not a number", text, spec.name));
    return {std::string(*(*m)[1]), typed_param(spec, std::string(*(*m)[2]))};
  }
  return {"", typed_param(spec, text)};
}

}  // namespace

std::vector<std::string> axis_values(const std::string& text) {
  static const util::Regex generator(R"(\s*(range|pow2)\s*\((.*)\)\s*)");
  const auto m = generator.full_match(text);
  if (!m) return {text};
  const std::string kind(*(*m)[1]);
  std::vector<std::int64_t> args;
  const std::string arguments(*(*m)[2]);
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
    for (auto v = args[0]; v <= args[1]; v += args[2]) out.push_back(std::to_string(v));
  } else {
    if (args.size() != 2) throw std::invalid_argument("pow2 takes two whole numbers: pow2(start, stop), both included");
    for (std::int64_t v = 1; v <= args[1] && v > 0; v *= 2)
      if (v >= args[0]) out.push_back(std::to_string(v));
  }
  if (out.empty()) throw std::invalid_argument(fmt::format("'{}' expands to zero points", text));
  return out;
}

void read_axes(const YAML::Node& n, const std::string& file, bool from_defaults, std::vector<AxisSpec>& out,
               std::vector<util::Problem>& problems) {
  if (!n.IsMap()) {
    problems.push_back({at(file, n), "axes must be a mapping: a parameter, then its values (a list, range(...) or pow2(...))"});
    return;
  }
  for (const auto& kv : n) {
    AxisSpec axis{{kv.first.as<std::string>(), at(file, kv.first)}, {}, from_defaults};
    for (const auto& written : scalars(kv.second, file, "axis values", problems)) {
      try {
        for (auto& v : axis_values(written.value)) axis.values.push_back({std::move(v), written.pos});
      } catch (const std::invalid_argument& e) {
        problems.push_back({written.pos, e.what()});
      }
    }
    if (axis.values.empty() && kv.second.IsSequence() && kv.second.size() == 0)
      problems.push_back({axis.name.pos, fmt::format("axis '{}' has no values: it would expand to zero points", axis.name.value)});
    auto same = std::find_if(out.begin(), out.end(), [&](const AxisSpec& a) { return a.name.value == axis.name.value; });
    if (same != out.end()) *same = std::move(axis);  // the experiment's own replaces the default, in place
    else out.push_back(std::move(axis));
  }
}

void read_zip(const YAML::Node& n, const std::string& file, std::vector<std::vector<Located<std::string>>>& out,
              std::vector<util::Problem>& problems) {
  if (!n.IsSequence()) {
    problems.push_back({at(file, n), "zip must be a list of groups of axes that move together, e.g. zip: [[seq, batch]]"});
    return;
  }
  for (const auto& group : n) {
    if (!group.IsSequence() || group.size() < 2) {
      problems.push_back({at(file, group), "each zip group is a list of two or more axes, e.g. [seq, batch]"});
      continue;
    }
    out.push_back(scalars(group, file, "zip entries", problems));
  }
}

void read_exclude(const YAML::Node& n, const std::string& file, std::vector<Exclusion>& out, std::vector<util::Problem>& problems) {
  if (!n.IsSequence()) {
    problems.push_back({at(file, n), "exclude must be a list of mappings, e.g. exclude: [{seq: \">4096\", dtype: fp32}]"});
    return;
  }
  for (const auto& e : n) {
    if (!e.IsMap() || e.size() == 0) {
      problems.push_back({at(file, e), "an exclusion is a mapping from axes to the values it leaves out, e.g. {seq: \">4096\", dtype: fp32}"});
      continue;
    }
    Exclusion x;
    for (const auto& kv : e)
      x.conditions.emplace_back(Located<std::string>{kv.first.as<std::string>(), at(file, kv.first)},
                                scalars(kv.second, file, "excluded values", problems));
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
    if (values.find('(') != std::string::npos) out.values = axis_values(values);  // a generator has commas of its own
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
                              std::vector<util::Problem>& problems) {
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
      problems.push_back({a.name.pos, fmt::format("plugin {} has no parameter '{}'{} (parameters: {})", plugin.name, a.name.value,
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
    problems.push_back({name.pos, fmt::format("{} names '{}', which is not an axis of {}{} (axes: {})", where, name.value, x.name.value,
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
            problems.push_back({w.pos, fmt::format("exclude: {} is not a value of axis '{}', so this leaves nothing out", w.value, name.value)});
        } catch (const std::invalid_argument& err) {
          problems.push_back({w.pos, err.what()});
        }
      }
    }
  }
  if (problems.size() != before) return {};

  // The product: an odometer over the leaders, the last axis turning fastest.
  std::vector<std::size_t> leaders;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (leader[i] == i) leaders.push_back(i);
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
