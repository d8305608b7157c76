// Like with like: a guess on a sweep point that reads another experiment (`gpu_time <
// sdpa_flash.gpu_time`) reads the point of that family with the same values on the axes both
// families have. The other family's remaining axes must leave exactly one point, else the guess is
// not evaluable with the reason.
#pragma once

#include <string>
#include <vector>

#include "series/axes.hpp"

namespace expr::report {

// An experiment of the run as planned: its identity, its family and its axis values.
struct PlannedPoint {
  std::string name;
  std::string family;
  series::AxisPoint point;
};

struct Resolution {
  std::string experiment;  // the identity to read; `reference` itself when no family has that name
  std::string problem;     // why no single point matches; empty when one does
};

// The point of family `reference` that a guess on the point `self` reads.
Resolution resolve(const std::string& reference, const series::AxisPoint& self, const std::vector<PlannedPoint>& planned);

}  // namespace expr::report
