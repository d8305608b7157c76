// The order experiments start in over several slots (runner/schedule.hpp), as `expr run --gpus`
// uses it with one slot per GPU: the costliest first, each in the lowest free slot, never more at
// once than there are slots.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "runner/schedule.hpp"

namespace {

using expr::runner::Job;
using expr::runner::Schedule;

// (experiment, slot) of each start until nothing more can start now.
std::vector<std::pair<std::size_t, std::size_t>> starts(Schedule& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  while (const auto x = s.next()) out.emplace_back(x->job.experiment, x->slot);
  return out;
}

using Starts = std::vector<std::pair<std::size_t, std::size_t>>;

}  // namespace

TEST_CASE("two GPUs: the costliest experiments start first, each in the lowest free slot, the next one where a slot frees") {
  // Plan order 0..4 with expected seconds 3, 40, 12, 40, 1.
  Schedule s(2, {{0, 3}, {1, 40}, {2, 12}, {3, 40}, {4, 1}});
  CHECK(starts(s) == Starts{{1, 0}, {3, 1}});  // equal costs keep the plan's order
  CHECK(s.busy() == 2);
  CHECK(!s.next());  // both GPUs busy
  s.done(1);
  CHECK(starts(s) == Starts{{2, 1}});
  s.done(0);
  CHECK(starts(s) == Starts{{0, 0}});
  s.done(0);
  CHECK(starts(s) == Starts{{4, 0}});
  CHECK(!s.waiting());
  s.done(0);
  s.done(1);
  CHECK(s.busy() == 0);
  CHECK(!s.next());
}

TEST_CASE("without expected costs the plan's order holds, over as many slots as there are GPUs") {
  Schedule s(3, {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}});
  CHECK(starts(s) == Starts{{0, 0}, {1, 1}, {2, 2}});
  s.done(2);
  s.done(0);
  CHECK(starts(s) == Starts{{3, 0}, {4, 2}});
}

TEST_CASE("the jobs not started can be taken, in their order, and then none are left") {
  Schedule s(1, {{0, 1}, {1, 3}, {2, 2}});
  CHECK(starts(s) == Starts{{1, 0}});
  const auto left = s.take_waiting();
  REQUIRE(left.size() == 2);
  CHECK(left[0].experiment == 2);
  CHECK(left[1].experiment == 0);
  s.done(0);
  CHECK(!s.next());
}
