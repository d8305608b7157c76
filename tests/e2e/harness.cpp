#include "harness.hpp"

#include <fcntl.h>
#include <unistd.h>

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

int start_expr(const fs::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv_text{EXPR_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork");
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::chdir(dir.c_str()) != 0 || ::setenv("EXPR_PLUGIN_PATH", EXPR_TEST_PLUGIN_DIR, 1) != 0) ::_exit(127);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
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
