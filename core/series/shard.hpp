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

// The shard each experiment of `plan` runs in, parallel to plan.experiments. Without a history of
// costs, round-robin over series order: shards differ by at most one experiment, a family's sweep
// points spread over every shard, and the assignment changes only when the series does.
std::vector<std::size_t> assign_shards(const Plan& plan, std::size_t count);

// What makes two runs the same series: the series file's text, the --axis options and every
// experiment's identity, hashed (FNV-1a, 64 bits, in hex). Shards of one series share it.
std::string fingerprint(const Plan& plan, const std::string& series_text, const std::vector<std::string>& axis_options);

}  // namespace expr::series
