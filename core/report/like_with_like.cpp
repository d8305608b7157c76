// Resolving a family name to the point a guess compares with (like_with_like.hpp).
#include "report/like_with_like.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "series/plan.hpp"

namespace expr::report {

namespace {

const ParamValue* value_of(const series::AxisPoint& point, const std::string& axis) {
  const auto it = std::find_if(point.begin(), point.end(), [&](const auto& kv) { return kv.first == axis; });
  return it == point.end() ? nullptr : &it->second;
}

}  // namespace

Resolution resolve(const std::string& reference, const series::AxisPoint& self, const std::vector<PlannedPoint>& planned) {
  std::vector<const PlannedPoint*> family, matching;
  for (const auto& p : planned)
    if (p.family == reference) family.push_back(&p);
  if (family.empty()) return {reference, ""};

  std::set<std::string> shared, other_axes;
  for (const auto* p : family) {
    const bool same = std::all_of(p->point.begin(), p->point.end(), [&](const auto& kv) {
      const auto* mine = value_of(self, kv.first);
      return !mine || *mine == kv.second;
    });
    for (const auto& [axis, value] : p->point) (value_of(self, axis) ? shared : other_axes).insert(axis);
    if (same) matching.push_back(p);
  }
  if (matching.size() == 1) return {matching.front()->name, ""};

  std::vector<std::string> wanted;
  for (const auto& axis : shared) wanted.push_back(axis + "=" + series::to_string(*value_of(self, axis)));
  const auto at = wanted.empty() ? std::string("") : fmt::format(" with {}", fmt::join(wanted, ","));
  if (matching.empty()) return {reference, fmt::format("{} has no point{}", reference, at)};
  return {reference, fmt::format("{} has {} points{}: they differ in {}, so the guess does not say which to compare with; give this "
                                 "experiment those axes too, or compare within one family",
                                 reference, matching.size(), at, fmt::join(other_axes, ", "))};
}

}  // namespace expr::report
