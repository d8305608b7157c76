// Runs the real expr binary on series files written by the test, and reads what it left behind.
#pragma once

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace e2e {

// Whether the expr under test can run experiments: not where it was built without CUDA
// (EXPR_WITH_CUDA=OFF), which has no runner.
inline constexpr bool has_runner = EXPR_E2E_RUNNER;
// Marks a case that runs experiments (`expr run`, `calibrate`, `slurm`): TEST_CASE("..." *
// e2e::runs_experiments). Without a runner the case is skipped, and so not listed to ctest. A case
// skipped for another reason too takes doctest::skip(reason || !e2e::has_runner): the last skip
// decorator is the one that holds.
inline const doctest::skip runs_experiments{!has_runner};

struct Outcome {
  int exit_code = -1;
  std::string out, err;
  std::string all() const { return "--- stdout\n" + out + "\n--- stderr\n" + err; }  // for INFO()
};

// Whether `text` holds `part`; with an outcome, whether its stderr does, where expr's messages go.
inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
inline bool has(const Outcome& o, const std::string& part) { return has(o.err, part); }

// A fresh directory per test case under the build tree.
std::filesystem::path scratch(const std::string& name);

// Writes `text` to dir/name and returns the path.
std::filesystem::path write(const std::filesystem::path& dir, const std::string& name, const std::string& text);

// Runs `expr ARGS` in `dir` with the test plugins on EXPR_PLUGIN_PATH and `env` prepended.
Outcome expr(const std::filesystem::path& dir, const std::string& args, const std::string& env = "");

// `expr ARGS` started in `dir` (test plugins on EXPR_PLUGIN_PATH, `env` as NAME=VALUE words
// added) without waiting for it, for tests that signal it. ARGS are split at spaces.
struct Background {
  pid_t pid = -1;
  std::filesystem::path dir;
  // Waits for it to end, at most `limit` (then kills it and fails the test); exit_code is 128 + N
  // when signal N ended it, as a shell reports it.
  Outcome wait(std::chrono::seconds limit);
};
Background start(const std::filesystem::path& dir, const std::string& args, const std::string& env = "");

// Polls `condition` every 50 ms for up to `limit`; whether it came true.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit);

// The live processes (zombies left out) whose environment holds `variable` (NAME=VALUE): a
// variable given to `start` is inherited by expr, its workers and whatever they start.
std::vector<pid_t> processes_with(const std::string& variable);

nlohmann::json read_json(const std::filesystem::path& file);
std::string read_text(const std::filesystem::path& file);
// A run directory's results as its documented layout has them at any moment, even after kill -9:
// results.json with each record of the journal (experiments.jsonl, one experiment a line, a line
// cut short by a crash skipped) put over the experiment of the same name, or added. What a tool
// outside expr would do; expr's own reader is report::RunDirectory::read.
nlohmann::json read_run(const std::filesystem::path& run_dir);

// The experiment named `name` in a results.json document.
const nlohmann::json& experiment(const nlohmann::json& results, const std::string& name);

// An experiment's judged guesses (expr.results/1 called them "expectations").
const nlohmann::json& guesses(const nlohmann::json& experiment);
// The judged guess with text `check` of an experiment.
const nlohmann::json& guess(const nlohmann::json& experiment, const std::string& check);

}  // namespace e2e
