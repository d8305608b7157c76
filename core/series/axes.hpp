// Sweeps: an experiment's axes as read from the series file, and a point's identity. Their
// expansion into one point per combination (series/sweep.hpp) is the one place where a sweep
// becomes separate experiments: plan.cpp makes one ExperimentPlan per point, so the runner and the
// reports never see an axis.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "series/series.hpp"

namespace YAML {
class Node;
}

namespace expr::series {

// A point's axis values, in axis order.
using AxisPoint = std::vector<std::pair<std::string, ParamValue>>;

// The most points `max_points` may allow: each point is a worker process, so a million is days of
// running already, and more would only make a hostile series expand for minutes before refusal.
constexpr std::size_t max_points_ceiling = 1'000'000;

// The values an axis entry stands for: "range(512, 8192, 512)" (start to stop inclusive, by step),
// "pow2(256, 8192)" (the powers of two from start to stop, both positive), or the text itself. Throws
// std::invalid_argument with the reason, also for a generator that yields nothing, or more than
// `limit` values (counted before any is made).
std::vector<std::string> axis_values(const std::string& text, std::size_t limit);

// What reading `axes:`, `zip:` and `exclude:` needs of the series reader (series.cpp), so that
// their problems are placed, quoted and collected like every other problem of the file.
class NodeReader {
 public:
  virtual ~NodeReader() = default;
  // Where the node was written; a scalar on one line is marked along its text.
  virtual util::SourcePos pos(const YAML::Node& n) const = 0;
  // A mapping key as text; a problem, and nothing, for a key written as a list or mapping.
  virtual std::optional<std::string> key_text(const YAML::Node& key) = 0;
  virtual void problem(const util::SourcePos& p, std::string message) = 0;
};

// Reading the `axes:`, `zip:` and `exclude:` keys; each reports its problems to `reader`.
// A generator in `axes:` may expand to at most `max_points` values: a sweep of more is refused.
void read_axes(const YAML::Node& n, NodeReader& reader, bool from_defaults, std::size_t max_points, std::vector<AxisSpec>& out);
void read_zip(const YAML::Node& n, NodeReader& reader, std::vector<std::vector<Located<std::string>>>& out);
void read_exclude(const YAML::Node& n, NodeReader& reader, std::vector<Exclusion>& out);

// `--axis NAME=V1,V2` (values as in the file: `--axis seq=pow2(256,4096)` works): replaces that
// axis's values, or makes the parameter an axis, in every experiment whose plugin declares it.
struct AxisOverride {
  std::string option;  // as given, for messages
  std::string name;
  std::vector<std::string> values;
};
// Throws std::invalid_argument naming the option.
AxisOverride parse_axis_override(const std::string& option);

// A point's identity: "sdpa[backend=flash,seq=2048]"; the family name alone when there are no axes.
std::string identity(const std::string& family, const AxisPoint& point);

}  // namespace expr::series
