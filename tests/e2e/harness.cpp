#include "harness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

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

namespace {
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}
}  // namespace

Background start(const fs::path& dir, const std::string& args, const std::string& env) {
  auto argv_words = words(args);
  argv_words.insert(argv_words.begin(), EXPR_BINARY);
  const auto env_words = words(env);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    const int out = ::open("stdout.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open("stderr.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::setenv("EXPR_PLUGIN_PATH", EXPR_TEST_PLUGIN_DIR, 1);
    for (const auto& w : env_words) ::putenv(const_cast<char*>(w.c_str()));
    std::vector<char*> argv;
    for (auto& w : argv_words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return {pid, dir};
}

Outcome Background::wait(std::chrono::seconds limit) {
  int status = 0;
  const bool ended = eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, limit);
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    throw std::runtime_error("expr did not end within " + std::to_string(limit.count()) + " s");
  }
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = slurp(dir / "stdout.txt");
  o.err = slurp(dir / "stderr.txt");
  return o;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

std::vector<pid_t> processes_with(const std::string& variable) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto stat = slurp(entry.path() / "stat");  // "pid (comm) S ...": the state follows the last ')'
    const auto state_at = stat.rfind(')');
    if (state_at == std::string::npos || stat.substr(state_at + 2, 1) == "Z") continue;
    const auto environ = slurp(entry.path() / "environ");
    std::size_t start = 0;
    for (std::size_t end; (end = environ.find('\0', start)) != std::string::npos; start = end + 1)
      if (environ.compare(start, end - start, variable) == 0) {
        found.push_back(std::stoi(name));
        break;
      }
  }
  return found;
}

std::string read_text(const fs::path& file) { return slurp(file); }

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("missing " + file.string());
  return nlohmann::json::parse(in);
}

nlohmann::json read_run(const fs::path& run_dir) {
  auto results = read_json(run_dir / "results.json");
  std::ifstream journal(run_dir / "experiments.jsonl");
  auto& experiments = results.at("experiments");
  for (std::string line; std::getline(journal, line) && !journal.eof();) {
    auto record = nlohmann::json::parse(line);
    const auto same = std::find_if(experiments.begin(), experiments.end(), [&](const auto& e) { return e.at("name") == record.at("name"); });
    if (same != experiments.end()) *same = std::move(record);
    else experiments.push_back(std::move(record));
  }
  return results;
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
