// Shards: `expr run FILE --shard K/N` runs a deterministic subset of a series' experiments, so that
// N machines (a Slurm job array) share a sweep and `expr merge` joins their run directories.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "series/plan.hpp"

namespace expr::series {

struct Shard {
  std::size_t index = 0;  // 0-based, as SLURM_ARRAY_TASK_ID counts
  std::size_t count = 1;
  std::string str() const;  // "1/3"
};

// "K/N" with 0 <= K < N; throws std::invalid_argument with the reason.
Shard parse_shard(const std::string& text);

// The shard each experiment of `plan` runs in, parallel to plan.experiments, balanced by `costs`
// (each experiment's expected cost, parallel to plan.experiments, in any one unit): the costliest
// first, each into the shard with the least cost so far (the lowest index on a tie), experiments of
// equal cost taken in the order of their identities. Every experiment lands in exactly one shard,
// and the same identities and costs give the same assignment, whatever the order of the plan. With
// equal costs, shards differ by at most one experiment. Throws std::invalid_argument when `costs`
// does not match the plan or holds a negative or non-finite cost.
std::vector<std::size_t> assign_shards(const Plan& plan, const std::vector<double>& costs, std::size_t count);

// What makes two runs the same series: the series file's text, the --axis options and every
// experiment's identity, hashed (FNV-1a, 64 bits, in hex). Shards of one series share it.
std::string fingerprint(const Plan& plan, const std::string& series_text, const std::vector<std::string>& axis_options);

}  // namespace expr::series
