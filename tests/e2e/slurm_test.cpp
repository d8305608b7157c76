// `expr slurm --submit` on a real Slurm: a single-node cluster on this machine (munged, slurmctld,
// slurmd: scripts/slurm-cluster) runs a series as a job array of 3 shards and the merge job after
// it. The merged verdicts equal a serial run's; a shard task cancelled mid-run (scancel) leaves its
// experiments reported missing, and submitting again resumes it without losing what it finished.
// The cluster needs root: otherwise, or where Slurm cannot be installed, those cases say so and
// ctest counts them as skipped (tests/e2e/CMakeLists.txt). What the scripts say is checked without
// a cluster.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <thread>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using e2e::has;

// What `command` (run by the shell) prints on stdout and stderr, and its exit status.
std::pair<int, std::string> shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Exit status of scripts/slurm-cluster start when Slurm is not installed and cannot be.
constexpr int slurm_not_installable = 3;

// The cluster, started in `dir` for one test case and stopped when it ends, however it ends. Its
// directory is outside the cases' scratch directories, so that a cluster left by a crashed test is
// found (and stopped) by the next start, and by the cleanup step ctest runs after the tests.
struct Cluster {
  fs::path dir = fs::path(EXPR_E2E_WORK_DIR) / "slurm-cluster";
  std::string skipped;  // why it did not start, when that is no failure of the test
  bool up = false;

  Cluster() {
    if (::geteuid() != 0) {
      skipped = "the single-node Slurm cluster needs root (munged, slurmctld and slurmd run as root)";
      return;
    }
    const auto [code, out] = shell("'" EXPR_SOURCE_DIR "/scripts/slurm-cluster' start '" + dir.string() + "'");
    if (code == slurm_not_installable) {
      skipped = out;
      return;
    }
    INFO(out);
    REQUIRE(code == 0);
    up = true;
  }
  ~Cluster() {
    if (up) shell("'" EXPR_SOURCE_DIR "/scripts/slurm-cluster' stop '" + dir.string() + "'");
  }
  std::string env() const { return "SLURM_CONF=" + (dir / "slurm.conf").string(); }
  // A Slurm command (squeue, scontrol, scancel) against this cluster.
  std::pair<int, std::string> command(const std::string& words) const { return shell(env() + " " + words); }

  // Waits until none of `jobs` is pending or running, at most `limit`.
  bool wait_for(const std::string& jobs, std::chrono::seconds limit) const {
    return e2e::eventually([&] { return command("squeue -h -o %i -j " + jobs) == std::pair<int, std::string>{0, ""}; }, limit);
  }
  // The state and exit code of a finished job, as scontrol says them: "COMPLETED 0:0".
  std::string outcome(const std::string& job) const {
    const auto out = command("scontrol -o show job " + job).second;
    std::smatch state, exit_code;
    if (!std::regex_search(out, state, std::regex(R"(JobState=(\S+))")) || !std::regex_search(out, exit_code, std::regex(R"( ExitCode=(\S+))")))
      return out;
    return state[1].str() + " " + exit_code[1].str();
  }
};

// The job ids `expr slurm --submit` printed: the array's, then the merge's.
std::pair<std::string, std::string> submitted(const std::string& printed) {
  std::smatch array, merge;
  std::regex_search(printed, array, std::regex(R"(submitted the array: job (\d+))"));
  std::regex_search(printed, merge, std::regex(R"(submitted the merge: job (\d+))"));
  REQUIRE_MESSAGE((!array.empty() && !merge.empty()), printed);
  return {array[1], merge[1]};
}

// Every verdict of a results.json, by experiment and guess, and by sweep.
std::map<std::string, std::string> verdicts(const nlohmann::json& results) {
  std::map<std::string, std::string> out;
  for (const auto& e : results.at("experiments"))
    for (const auto& g : e.at("guesses")) out[e.at("name").get<std::string>() + ": " + g.at("check").get<std::string>()] = g.at("verdict");
  for (const auto& g : results.at("sweep_guesses"))
    out[g.at("family").get<std::string>() + " sweep: " + g.at("check").get<std::string>()] = g.at("verdict");
  return out;
}

// The experiments of a results.json that ran to a result.
std::map<std::string, nlohmann::json> finished(const fs::path& results) {
  std::map<std::string, nlohmann::json> out;
  if (!fs::exists(results)) return out;
  const auto run = e2e::read_json(results);
  for (const auto& e : run.at("experiments"))
    if (e.at("status") == "ok") out[e.at("name")] = e;
  return out;
}

}  // namespace

TEST_CASE("expr slurm writes a job array and a merge job that depends on it, with the options passed through and every path quoted") {
  const auto dir = e2e::scratch("slurm_scripts");
  e2e::write(dir, "series.yaml", R"(series: two
defaults:
  device: cpu
experiments:
  - name: a
    plugin: sleeper
  - name: b
    plugin: sleeper
)");
  const auto o = e2e::expr(dir, "slurm series.yaml --shards 2 --out 'run root' --partition gpu --time 1:00:00 --account proj --qos high "
                                "--constraint 'h200&nvlink' --gpus-per-task 1 --sbatch-line=--mem=8G --sbatch-line '#SBATCH --exclusive'");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  const auto root = fs::canonical(dir / "run root");
  const auto array = e2e::read_text(root / "shards.sbatch");
  const auto merge = e2e::read_text(root / "merge.sbatch");
  INFO(array);
  INFO(merge);
  for (const auto& line : {"#SBATCH --array=0-1\n", "#SBATCH --partition=gpu\n", "#SBATCH --time=1:00:00\n", "#SBATCH --account=proj\n",
                           "#SBATCH --qos=high\n", "#SBATCH --constraint=h200&nvlink\n", "#SBATCH --gpus-per-task=1\n", "#SBATCH --mem=8G\n",
                           "#SBATCH --exclusive\n"})
    CHECK_MESSAGE(has(array, line), line);
  CHECK(has(array, "#SBATCH --output=\"" + (root / "logs" / "shard-%a-job-%A.out").string() + "\"\n"));
  CHECK(has(array, "--shard \"$SLURM_ARRAY_TASK_ID/2\""));
  CHECK(has(array, "shard='" + root.string() + "'/shard-$SLURM_ARRAY_TASK_ID\n"));
  CHECK(!has(array, "--gpus all"));  // one GPU a task: a plain run on it
  // The merge job gets what it needs to be allowed to run, nothing that shapes the array's work.
  for (const auto& line : {"#SBATCH --partition=gpu\n", "#SBATCH --time=1:00:00\n", "#SBATCH --account=proj\n", "#SBATCH --qos=high\n"})
    CHECK_MESSAGE(has(merge, line), line);
  for (const auto& part : {"--array", "--gpus-per-task", "--constraint", "--mem", "--exclusive"}) CHECK_MESSAGE(!has(merge, part), part);
  CHECK(has(merge, " merge \"${shards[@]}\" --out '" + (root / "merged").string() + "' --force\n"));
  CHECK(fs::is_directory(root / "logs"));  // sbatch does not create the directory of --output
  CHECK(has(o.out, "sbatch --dependency=afterany:${array%%;*} '" + (root / "merge.sbatch").string() + "'"));
  for (const auto& script : {"shards.sbatch", "merge.sbatch"})
    CHECK_MESSAGE(shell("bash -n '" + (root / script).string() + "'").first == 0, script);

  // Several GPUs a task: the task's run, new or resumed, puts a worker on each of them.
  const auto wide = e2e::expr(dir, "slurm series.yaml --shards 2 --out wide --gpus-per-task 4");
  REQUIRE(wide.exit_code == 0);
  const auto wide_array = e2e::read_text(dir / "wide" / "shards.sbatch");
  INFO(wide_array);
  CHECK(has(wide_array, "#SBATCH --gpus-per-task=4\n"));
  CHECK(has(wide_array, "run --resume \"$shard\" --no-history --gpus all\n"));
  CHECK(has(wide_array, "--out \"$shard\" --force --no-history --gpus all\n"));

  const auto too_many = e2e::expr(dir, "slurm series.yaml --shards 3 --out more");
  CHECK(too_many.exit_code == 2);
  CHECK(has(too_many.err, "--shards 3: the series has 2 experiments, so shards 2 and above would be empty"));
  const auto quoted = e2e::expr(dir, "slurm series.yaml --shards 2 --out quoted --partition 'a\"b'");
  CHECK(quoted.exit_code == 2);
  CHECK(has(quoted.err, "an #SBATCH line cannot hold a double quote or a line break"));

  // A run root that holds a shard of another shard count is not resumed as part of this array.
  const auto shard = e2e::expr(dir, "run series.yaml --shard 0/2 --out 'run root/shard-0' --no-history");
  REQUIRE(shard.exit_code == 0);
  const auto other = e2e::expr(dir, "slurm series.yaml --shards 1 --out 'run root'");
  CHECK(other.exit_code == 2);
  CHECK(has(other.err, (root / "shard-0").string() + " holds shard 0/2 of this series"));
}

// The series of tests/e2e/shard_test.cpp without its pauses: sleeper busy-waits base_us *
// (size/1024)^k µs, so each point's guess and the crossover have a known answer, and round-robin
// over 3 shards makes each point's guess read a point of another shard.
TEST_CASE("expr slurm --submit runs a series as a job array of 3 shards on a real Slurm, and the merge job gives the serial run's verdicts") {
  const Cluster cluster;
  if (!cluster.skipped.empty()) {
    MESSAGE("SKIPPED: " << cluster.skipped);
    return;
  }
  const auto dir = e2e::scratch("slurm_array");
  e2e::write(dir, "series.yaml", R"(series: sharded
defaults:
  device: cpu
  # 40 samples: the median's 95% interval then leaves out the calls a loaded machine preempted (with 3 to 15 it spanned them)
  iterations: {warmup: 1, traced: 1, min_samples: 40, min_time: 0.02, max_time: 1}
experiments:
  - name: quadratic
    plugin: sleeper
    params: {k: 2, base_us: 50}
    axes: {size: [1024, 2048, 4096]}
    expect:
      - host_time < linear.host_time
    sweep_expect:
      - crossover(host_time, size, linear) ~ 2500 within 25%
  - name: single
    plugin: sleeper
    params: {k: 1, base_us: 20}
  - name: linear
    plugin: sleeper
    params: {k: 1, base_us: 140}
    axes: {size: [1024, 2048, 4096]}
)");
  const auto serial = e2e::expr(dir, "run series.yaml --out serial --no-history");
  INFO(serial.all());
  REQUIRE(serial.exit_code == 0);

  const auto submit = e2e::expr(dir, "slurm series.yaml --shards 3 --out cluster-run --submit", cluster.env());
  INFO(submit.all());
  REQUIRE(submit.exit_code == 0);
  const auto [array, merge] = submitted(submit.out);
  REQUIRE(cluster.wait_for(array + "," + merge, 120s));
  const auto root = dir / "cluster-run";
  INFO(e2e::read_text(root / "logs" / ("merge-job-" + merge + ".out")));
  CHECK(cluster.outcome(merge) == "COMPLETED 0:0");
  for (int task = 0; task < 3; ++task) {
    const auto id = array + "_" + std::to_string(task);
    CHECK_MESSAGE(cluster.outcome(id) == "COMPLETED 0:0", id);
    const auto shard = e2e::read_json(root / ("shard-" + std::to_string(task)) / "results.json");
    CHECK(shard.at("shard").at("index") == task);
    CHECK(shard.at("shard").at("count") == 3);
  }
  const auto merged = e2e::read_json(root / "merged" / "results.json");
  const auto expected = verdicts(e2e::read_json(dir / "serial" / "results.json"));
  CHECK(expected.at("quadratic[size=4096]: host_time < linear.host_time") == "contradicted");
  CHECK(expected.at("quadratic sweep: crossover(host_time, size, linear) ~ 2500 within 25%") == "confirmed");
  CHECK(verdicts(merged) == expected);
  CHECK(finished(root / "merged" / "results.json").size() == 7);
}

// Six points whose setup() sleeps 2.5 s: shard 1 of 3 runs two of them, and is cancelled once the
// first has finished.
TEST_CASE("a shard task cancelled mid-run is reported missing by the merge job, and submitting again resumes only what it did not finish") {
  const Cluster cluster;
  if (!cluster.skipped.empty()) {
    MESSAGE("SKIPPED: " << cluster.skipped);
    return;
  }
  const auto dir = e2e::scratch("slurm_cancel");
  // One timing round: with more, a shard's first point would finish only with its second point's
  // rounds (runner/series_runner.cpp spreads them over the run), and the cancel would find both done.
  e2e::write(dir, "series.yaml", R"(series: slow
defaults:
  device: cpu
  iterations: {warmup: 1, traced: 1, min_samples: 3, min_time: 0.01, max_time: 0.1, rounds: 1}
experiments:
  - name: slow
    plugin: sleeper
    params: {k: 0, base_us: 20, setup_ms: 2500}
    axes: {size: [1024, 2048, 4096, 8192, 16384, 32768]}
    expect:
      - host_time < 1 ms
)");
  const auto root = dir / "cluster-run";
  const auto shard1 = root / "shard-1" / "results.json";
  const std::string submit_command = "slurm series.yaml --shards 3 --out cluster-run --submit";

  const auto first = e2e::expr(dir, submit_command, cluster.env());
  INFO(first.all());
  REQUIRE(first.exit_code == 0);
  const auto [array, merge] = submitted(first.out);
  REQUIRE_MESSAGE(e2e::eventually([&] { return finished(shard1).size() == 1; }, 60s), "shard 1 did not finish its first point");
  const auto [cancel_code, cancel_out] = cluster.command("scancel " + array + "_1");
  INFO(cancel_out);
  REQUIRE(cancel_code == 0);
  REQUIRE(cluster.wait_for(array + "," + merge, 120s));
  const auto kept = finished(shard1);
  REQUIRE(kept.size() == 1);
  const auto& [kept_name, kept_result] = *kept.begin();
  // The point of shard 1 that did not finish, from the plan the shard recorded.
  std::string unfinished;
  const auto shard1_run = e2e::read_json(shard1);
  for (const auto& p : shard1_run.at("shard").at("plan"))
    if (p.at("shard") == 1 && p.at("experiment") != kept_name) unfinished = p.at("experiment");
  REQUIRE(!unfinished.empty());

  CHECK(cluster.outcome(array + "_1").rfind("CANCELLED ", 0) == 0);
  const auto merge_log = e2e::read_text(root / "logs" / ("merge-job-" + merge + ".out"));
  INFO(merge_log);
  // The merge ran after the cancelled task (afterany) and exited with 6: experiments are missing.
  CHECK(cluster.outcome(merge) == "FAILED 6:0");
  CHECK(has(merge_log, unfinished + " (shard 1/3, which did not run it: interrupted"));
  CHECK(has(merge_log, "5 of 6 experiments have a result"));
  CHECK(finished(root / "merged" / "results.json").size() == 5);

  const auto again = e2e::expr(dir, submit_command, cluster.env());
  INFO(again.all());
  REQUIRE(again.exit_code == 0);
  const auto [array2, merge2] = submitted(again.out);
  REQUIRE(cluster.wait_for(array2 + "," + merge2, 120s));
  INFO(e2e::read_text(root / "logs" / ("merge-job-" + merge2 + ".out")));
  CHECK(cluster.outcome(merge2) == "COMPLETED 0:0");
  // Shard 1 ran only its missing point; what it had finished is kept as it was measured.
  CHECK(has(e2e::read_text(root / "logs" / ("shard-1-job-" + array2 + ".out")), "1 of 2 experiments have a result; running the other 1"));
  const auto resumed = finished(shard1);
  REQUIRE(resumed.size() == 2);
  CHECK(resumed.at(kept_name).at("timing") == kept_result.at("timing"));
  const auto merged = finished(root / "merged" / "results.json");
  CHECK(merged.size() == 6);
  for (const auto& [name, e] : merged) CHECK_MESSAGE(e2e::guess(e, "host_time < 1 ms").at("verdict") == "confirmed", name);
}
