#include "harness.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace e2e {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const auto dir = fs::path(EXPR_E2E_WORK_DIR) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
  const auto file = dir / name;
  std::ofstream(file) << text;
  return file;
}

namespace {
std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

Outcome expr(const fs::path& dir, const std::string& args, const std::string& env) {
  const auto command = "cd '" + dir.string() + "' && env EXPR_PLUGIN_PATH='" EXPR_TEST_PLUGIN_DIR "' " + env + " '" EXPR_BINARY "' " +
                       args + " > stdout.txt 2> stderr.txt";
  const int status = std::system(command.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(dir / "stdout.txt");
  o.err = slurp(dir / "stderr.txt");
  return o;
}

std::string read_text(const fs::path& file) { return slurp(file); }

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("missing " + file.string());
  return nlohmann::json::parse(in);
}

const nlohmann::json& experiment(const nlohmann::json& results, const std::string& name) {
  for (const auto& e : results.at("experiments"))
    if (e.at("name") == name) return e;
  throw std::runtime_error("no experiment " + name + " in results.json");
}

const nlohmann::json& guesses(const nlohmann::json& experiment) {
  return experiment.contains("guesses") ? experiment.at("guesses") : experiment.at("expectations");
}

const nlohmann::json& guess(const nlohmann::json& experiment, const std::string& check) {
  for (const auto& x : guesses(experiment))
    if (x.at("check") == check) return x;
  throw std::runtime_error("no guess '" + check + "' in " + experiment.at("name").get<std::string>());
}

}  // namespace e2e
