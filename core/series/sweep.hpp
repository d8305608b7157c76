// Sweep expansion as pieces that compose: the axes that apply to an experiment, typed by its
// plugin; the spaces they turn in (a lone axis, or a zip group whose axes move together); the
// exclusions, typed like the axes they name; and the odometer that turns the spaces into points.
// expand() puts them together; the reading of what was written is series/axes.hpp's.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "series/axes.hpp"

namespace expr::series {

// An axis whose values have the type its plugin parameter declares.
struct TypedAxis {
  std::string name;
  const ParamSpec* spec = nullptr;  // the plugin's parameter, which outlives the expansion
  std::vector<ParamValue> values;
};

// The axes of an experiment that apply to its plugin: the file's, where the plugin declares them,
// each replaced by an --axis option that names it (or added when the file has no such axis).
struct ApplicableAxes {
  std::vector<AxisSpec> axes;
  std::set<std::string> overridden;  // the names an option set: their values are not the file's
};
// An axis of the experiment's own that the plugin does not declare is a problem; one from the
// defaults applies only where it is declared.
ApplicableAxes applicable_axes(const ExperimentSpec& x, const Description& plugin, const std::vector<AxisOverride>& overrides,
                               std::vector<util::Problem>& problems);

// The axes with their values typed; a value of the wrong type is a problem at its place, and left out.
// Every axis must be a parameter of the plugin, as applicable_axes leaves them.
std::vector<TypedAxis> typed_axes(const std::vector<AxisSpec>& axes, const Description& plugin, std::vector<util::Problem>& problems);

// Axes that turn together: each step of the space sets every one of them to its value at that step.
// A lone axis is a space of one axis; a zip group is a space of several, as long as each other.
struct AxisSpace {
  std::vector<std::size_t> axes;  // indices into the experiment's axes, in axis order
  std::size_t steps = 0;
};

// The spaces of `axes` (as written, in order) under `zip`: each zip group one space, each axis in no
// group a space of its own, ordered by their first axis. An unknown axis, an axis in two groups and
// a group of different lengths are problems.
std::vector<AxisSpace> axis_spaces(const std::vector<AxisSpec>& axes, const std::vector<std::vector<Located<std::string>>>& zip,
                                   const std::string& experiment, std::vector<util::Problem>& problems);

// An exclusion's condition on one value: equal to it, or a comparison ("<", "<=", ">", ">=", "!=")
// for numeric parameters.
struct Condition {
  std::string op;  // "" for equality
  ParamValue value;
  bool matches(const ParamValue& v) const;
};
// "fp32", ">4096", "<= 2.5" as a condition on the parameter `spec`; throws std::invalid_argument
// with the reason (a comparison on a non-numeric parameter, a value of the wrong type).
Condition condition(const ParamSpec& spec, const std::string& text);

// An `exclude:` entry, typed: it leaves a point out when, on every axis it names, the point's value
// meets one of the conditions written for that axis. One that names no axis leaves nothing out.
struct ExclusionRule {
  struct OnAxis {
    std::size_t axis;  // index into the experiment's axes
    std::vector<Condition> any_of;
  };
  std::vector<OnAxis> all_of;
  bool excludes(const AxisPoint& point) const;
};

// The experiment's `exclude:` entries against its typed axes. An unknown axis, a value of the wrong
// type, and an equality that names no value of its axis (it would leave nothing out; not checked
// for an axis an option set) are problems.
std::vector<ExclusionRule> exclusion_rules(const std::vector<Exclusion>& exclude, const std::vector<TypedAxis>& axes,
                                           const std::set<std::string>& overridden, const std::string& experiment,
                                           std::vector<util::Problem>& problems);

// The cartesian product of spaces, read as an odometer: the last space turns fastest, and a space
// that rolls over turns the one before it. Each position gives every axis the index of its value.
class Odometer {
 public:
  Odometer(std::vector<AxisSpace> spaces, std::size_t axis_count);
  // How many positions there are, known before turning; `limit` + 1 for any count above `limit`, so
  // that no product overflows.
  std::size_t positions(std::size_t limit) const;
  // Past the last position (at once for a product with none).
  bool at_end() const { return at_end_; }
  // The index of each axis's value at the current position.
  const std::vector<std::size_t>& value_indices() const { return value_index_; }
  void turn();

 private:
  std::vector<AxisSpace> spaces_;
  std::vector<std::size_t> step_;         // per space
  std::vector<std::size_t> value_index_;  // per axis
  bool at_end_;
};

// Every point of the odometer's positions, in order, that no rule excludes.
std::vector<AxisPoint> sweep_points(const std::vector<TypedAxis>& axes, Odometer odometer, const std::vector<ExclusionRule>& rules);

// The points of one experiment in order: the cartesian product of its axes (a zip group counts as
// one axis whose values move together), less the excluded points. One empty point when it has no
// axes; none when there were problems, which are added at the file's places (or the option's). A
// product of more than `max_points` before exclusions is such a problem, found before any point is
// made.
std::vector<AxisPoint> expand(const ExperimentSpec& x, const Description& plugin, const std::vector<AxisOverride>& overrides,
                              std::size_t max_points, std::vector<util::Problem>& problems);

}  // namespace expr::series
