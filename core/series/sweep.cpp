// Sweep expansion (sweep.hpp): each piece on its own, then expand(), which composes them.
#include "series/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "series/plan.hpp"
#include "util/text.hpp"

namespace expr::series {

namespace {

const ParamSpec* parameter(const Description& plugin, const std::string& name) {
  const auto it = std::find_if(plugin.params.begin(), plugin.params.end(), [&](const ParamSpec& p) { return p.name == name; });
  return it == plugin.params.end() ? nullptr : &*it;
}

template <class Axis>
std::vector<std::string> names_of(const std::vector<Axis>& axes, std::string Axis::*name) {
  std::vector<std::string> names;
  for (const auto& a : axes) names.push_back(a.*name);
  return names;
}

// The index of the axis `name` names in `where` (zip, exclude); a problem when it is none of them.
std::optional<std::size_t> axis_index(const std::vector<std::string>& axis_names, const Located<std::string>& name, const char* where,
                                      const std::string& experiment, std::vector<util::Problem>& problems) {
  const auto it = std::find(axis_names.begin(), axis_names.end(), name.value);
  if (it != axis_names.end()) return static_cast<std::size_t>(it - axis_names.begin());
  problems.push_back({name.pos, fmt::format("{} names '{}', which is not an axis of {}{} (axes: {})", where, util::shortened(name.value), experiment,
                                            util::did_you_mean(name.value, axis_names), fmt::join(axis_names, ", "))});
  return std::nullopt;
}

// The conditions an exclusion writes for `axis`, typed like it.
ExclusionRule::OnAxis on_axis(std::size_t index, const TypedAxis& axis, const std::vector<Located<std::string>>& written, bool overridden,
                              std::vector<util::Problem>& problems) {
  ExclusionRule::OnAxis on{index, {}};
  for (const auto& w : written) {
    try {
      const auto& c = on.any_of.emplace_back(condition(*axis.spec, w.value));
      if (c.op.empty() && !overridden && std::find(axis.values.begin(), axis.values.end(), c.value) == axis.values.end())
        problems.push_back({w.pos, fmt::format("exclude: {} is not a value of axis '{}', so this leaves nothing out", util::shortened(w.value), axis.name)});
    } catch (const std::invalid_argument& err) {
      problems.push_back({w.pos, err.what()});
    }
  }
  return on;
}

}  // namespace

ApplicableAxes applicable_axes(const ExperimentSpec& x, const Description& plugin, const std::vector<AxisOverride>& overrides,
                               std::vector<util::Problem>& problems) {
  ApplicableAxes out;
  for (const auto& a : x.axes) {
    if (parameter(plugin, a.name.value)) {
      out.axes.push_back(a);
    } else if (!a.from_defaults) {
      const auto param_names = names_of(plugin.params, &ParamSpec::name);
      problems.push_back({a.name.pos, fmt::format("plugin {} has no parameter '{}'{} (parameters: {})", plugin.name, util::shortened(a.name.value),
                                                  util::did_you_mean(a.name.value, param_names), fmt::join(param_names, ", "))});
    }
  }
  for (const auto& o : overrides) {
    if (!parameter(plugin, o.name)) continue;
    AxisSpec axis{{o.name, {o.option, 0, 0}}, {}, false};
    for (const auto& v : o.values) axis.values.push_back({v, {o.option, 0, 0}});
    auto same = std::find_if(out.axes.begin(), out.axes.end(), [&](const AxisSpec& a) { return a.name.value == o.name; });
    if (same != out.axes.end()) *same = std::move(axis);
    else out.axes.push_back(std::move(axis));
    out.overridden.insert(o.name);
  }
  return out;
}

std::vector<TypedAxis> typed_axes(const std::vector<AxisSpec>& axes, const Description& plugin, std::vector<util::Problem>& problems) {
  std::vector<TypedAxis> out;
  for (const auto& a : axes) {
    auto& typed = out.emplace_back(TypedAxis{a.name.value, parameter(plugin, a.name.value), {}});
    for (const auto& v : a.values) {
      try {
        typed.values.push_back(typed_param(*typed.spec, v.value));
      } catch (const std::invalid_argument& e) {
        problems.push_back({v.pos, e.what()});
      }
    }
  }
  return out;
}

std::vector<AxisSpace> axis_spaces(const std::vector<AxisSpec>& axes, const std::vector<std::vector<Located<std::string>>>& zip,
                                   const std::string& experiment, std::vector<util::Problem>& problems) {
  std::vector<std::string> axis_names;
  for (const auto& a : axes) axis_names.push_back(a.name.value);
  // Each axis turns with its space's first axis: its own, unless a zip group makes it another's.
  std::vector<std::size_t> first(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) first[i] = i;
  std::set<std::size_t> zipped;
  for (const auto& group : zip) {
    std::vector<std::size_t> members;
    for (const auto& name : group)
      if (const auto i = axis_index(axis_names, name, "zip", experiment, problems)) {
        if (!zipped.insert(*i).second) problems.push_back({name.pos, fmt::format("axis '{}' is in two zip groups", name.value)});
        else members.push_back(*i);
      }
    if (members.size() < 2) continue;
    const auto lead = *std::min_element(members.begin(), members.end());
    for (const auto i : members) {
      first[i] = lead;
      if (axes[i].values.size() != axes[lead].values.size())
        problems.push_back({group.front().pos, fmt::format("zip: axes '{}' ({} values) and '{}' ({} values) must have as many values to move together",
                                                           axis_names[lead], axes[lead].values.size(), axis_names[i], axes[i].values.size())});
    }
  }
  // A space's first axis comes before its others, so its space exists when they join it.
  std::vector<AxisSpace> spaces;
  std::vector<std::size_t> space_of(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (first[i] == i) {
      space_of[i] = spaces.size();
      spaces.push_back({{}, axes[i].values.size()});
    }
    spaces[space_of[first[i]]].axes.push_back(i);
  }
  return spaces;
}

bool Condition::matches(const ParamValue& v) const {
  if (op.empty()) return v == value;
  const auto number = [](const ParamValue& p) { return std::holds_alternative<std::int64_t>(p) ? double(std::get<std::int64_t>(p)) : std::get<double>(p); };
  const double a = number(v), b = number(value);
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  return a != b;  // "!="
}

Condition condition(const ParamSpec& spec, const std::string& text) {
  const auto written = util::trimmed(text);
  for (const std::string_view op : {"<=", ">=", "!=", "<", ">"})
    if (written.substr(0, op.size()) == op) {
      if (spec.type != ParamType::integer && spec.type != ParamType::number)
        throw std::invalid_argument(fmt::format("'{}' compares, but parameter '{}' is not a number", util::shortened(text), spec.name));
      return {std::string(op), typed_param(spec, std::string(util::trimmed(written.substr(op.size()))))};
    }
  return {"", typed_param(spec, text)};
}

bool ExclusionRule::excludes(const AxisPoint& point) const {
  return !all_of.empty() && std::all_of(all_of.begin(), all_of.end(), [&](const OnAxis& on) {
    return std::any_of(on.any_of.begin(), on.any_of.end(), [&](const Condition& c) { return c.matches(point[on.axis].second); });
  });
}

std::vector<ExclusionRule> exclusion_rules(const std::vector<Exclusion>& exclude, const std::vector<TypedAxis>& axes,
                                           const std::set<std::string>& overridden, const std::string& experiment,
                                           std::vector<util::Problem>& problems) {
  const auto axis_names = names_of(axes, &TypedAxis::name);
  std::vector<ExclusionRule> rules;
  for (const auto& e : exclude) {
    auto& rule = rules.emplace_back();
    for (const auto& [name, written] : e.conditions)
      if (const auto i = axis_index(axis_names, name, "exclude", experiment, problems))
        rule.all_of.push_back(on_axis(*i, axes[*i], written, overridden.count(name.value) > 0, problems));
  }
  return rules;
}

Odometer::Odometer(std::vector<AxisSpace> spaces, std::size_t axis_count)
    : spaces_(std::move(spaces)), step_(spaces_.size(), 0), value_index_(axis_count, 0),
      at_end_(std::any_of(spaces_.begin(), spaces_.end(), [](const AxisSpace& s) { return s.steps == 0; })) {}

std::size_t Odometer::positions(std::size_t limit) const {
  if (at_end_) return 0;  // a space without steps
  std::size_t product = 1;
  for (const auto& s : spaces_) product = s.steps > limit / product ? limit + 1 : product * s.steps;
  return product;
}

void Odometer::turn() {
  for (auto s = spaces_.size(); s-- > 0;) {
    const bool rolls_over = ++step_[s] == spaces_[s].steps;
    if (rolls_over) step_[s] = 0;
    for (const auto axis : spaces_[s].axes) value_index_[axis] = step_[s];
    if (!rolls_over) return;
  }
  at_end_ = true;
}

std::vector<AxisPoint> sweep_points(const std::vector<TypedAxis>& axes, Odometer odometer, const std::vector<ExclusionRule>& rules) {
  std::vector<AxisPoint> points;
  for (; !odometer.at_end(); odometer.turn()) {
    AxisPoint point;
    for (std::size_t i = 0; i < axes.size(); ++i) point.emplace_back(axes[i].name, axes[i].values[odometer.value_indices()[i]]);
    if (std::none_of(rules.begin(), rules.end(), [&](const ExclusionRule& r) { return r.excludes(point); })) points.push_back(std::move(point));
  }
  return points;
}

std::vector<AxisPoint> expand(const ExperimentSpec& x, const Description& plugin, const std::vector<AxisOverride>& overrides,
                              std::size_t max_points, std::vector<util::Problem>& problems) {
  const auto before = problems.size();
  const auto [axes, overridden] = applicable_axes(x, plugin, overrides, problems);
  // Without axes, zip: and exclude: (the defaults', say) name nothing here to check.
  if (axes.empty()) return problems.size() == before ? std::vector<AxisPoint>{{}} : std::vector<AxisPoint>{};
  const auto typed = typed_axes(axes, plugin, problems);
  auto spaces = axis_spaces(axes, x.zip, x.name.value, problems);
  const auto rules = exclusion_rules(x.exclude, typed, overridden, x.name.value, problems);
  if (problems.size() != before) return {};

  Odometer odometer(std::move(spaces), typed.size());
  if (odometer.positions(max_points) > max_points) {
    problems.push_back({axes.front().name.pos, fmt::format("the axes of {} combine into more than max_points ({}) points before exclusions; "
                                                           "narrow them, or raise 'max_points' at the top of the series file (at most {})",
                                                           x.name.value, max_points, max_points_ceiling)});
    return {};
  }
  auto points = sweep_points(typed, std::move(odometer), rules);
  if (points.empty())
    problems.push_back({x.name.pos, fmt::format("the sweep of {} expands to zero points: every point is excluded", x.name.value)});
  return points;
}

}  // namespace expr::series
