// Runs the real expr binary on series files written by the test, and reads what it left behind.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace e2e {

struct Outcome {
  int exit_code = -1;
  std::string out, err;
  std::string all() const { return "--- stdout\n" + out + "\n--- stderr\n" + err; }  // for INFO()
};

// A fresh directory per test case under the build tree.
std::filesystem::path scratch(const std::string& name);

// Writes `text` to dir/name and returns the path.
std::filesystem::path write(const std::filesystem::path& dir, const std::string& name, const std::string& text);

// Runs `expr ARGS` in `dir` with the test plugins on EXPR_PLUGIN_PATH and `env` prepended.
Outcome expr(const std::filesystem::path& dir, const std::string& args, const std::string& env = "");

// Starts `expr ARGS` in `dir` as this process's own child (no shell between, so its pid is expr's),
// with the test plugins on EXPR_PLUGIN_PATH and its output in dir/stdout.txt and dir/stderr.txt.
// Returns its pid.
int start_expr(const std::filesystem::path& dir, const std::vector<std::string>& args);

nlohmann::json read_json(const std::filesystem::path& file);
std::string read_text(const std::filesystem::path& file);

// The experiment named `name` in a results.json document.
const nlohmann::json& experiment(const nlohmann::json& results, const std::string& name);

// An experiment's judged guesses (expr.results/1 called them "expectations").
const nlohmann::json& guesses(const nlohmann::json& experiment);
// The judged guess with text `check` of an experiment.
const nlohmann::json& guess(const nlohmann::json& experiment, const std::string& check);

}  // namespace e2e
