// `expr slurm`: a series as a Slurm job array, one shard a task (`expr run --shard K/N`), and a
// merge job that waits for the whole array (afterany) and joins what the shards left (`expr
// merge`). Everything goes into one run root on a filesystem the cluster's nodes share.
// Submitting again the same way resumes each shard that stopped, so only what is missing runs
// again (docs/slurm.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "session/options.hpp"

namespace expr::measure {

// The two job scripts written into the run root.
struct SlurmJobs {
  std::filesystem::path root, array, merge;
  std::size_t shards = 0;
};
// Writes them; the merge job exits with `incomplete_exit` (what `expr merge` exits with when
// experiments are missing) when no task left a shard directory. Stops with bad_input on a wrong
// series or option, or a run root holding shards of another submission; with cannot_write when
// they cannot be written.
SlurmJobs write_slurm_jobs(const session::SlurmArgs& args, int incomplete_exit);
// Submits the array, then the merge job that waits for it; each returns its job id. Stops with
// cannot_write when sbatch cannot be started or fails.
std::string submit_array(const SlurmJobs& jobs);
std::string submit_merge(const SlurmJobs& jobs, const std::string& array_id);

}  // namespace expr::measure
