// Plugins outside the tree, as their authors build them: expr installed into a prefix (and moved,
// since the installed tree is relocatable), a project scaffolded with `expr new plugin`, built with
// nothing but the installed package (find_package(expr)), and run through the installed `expr`.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path prefix = EXPR_SDK_PREFIX;
const fs::path expr_binary = prefix / "bin" / "expr";

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `command` in `dir` with expr's plugin path cleared, so only what the installed tree and
// the command itself name is found.
Outcome sh(const fs::path& dir, const std::string& command) {
  const auto log = dir / "command.log";
  const auto line = "cd '" + dir.string() + "' && env -u EXPR_PLUGIN_PATH " + command + " > '" + log.string() + "' 2>&1";
  const int status = std::system(line.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(log)};
}

fs::path scratch(const std::string& name) {
  const auto dir = fs::path(EXPR_SDK_WORK) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string expr(const std::string& args) { return "'" + expr_binary.string() + "' " + args; }

// Configures and builds a plugin project with the installed package found through
// CMAKE_PREFIX_PATH, as its README says; `extra` adds cache entries.
Outcome build(const fs::path& project, const std::string& extra = "") {
  const auto configure = sh(project, "'" EXPR_SDK_CMAKE "' -S . -B build " EXPR_SDK_CONFIGURE_ARGS " -DCMAKE_PREFIX_PATH='" +
                                         prefix.string() + "' " + extra);
  if (configure.exit_code != 0) return configure;
  auto built = sh(project, "'" EXPR_SDK_CMAKE "' --build build");
  built.out = configure.out + built.out;
  return built;
}

const nlohmann::json& guess(const nlohmann::json& results, const std::string& experiment, const std::string& check) {
  for (const auto& e : results.at("experiments"))
    if (e.at("name") == experiment)
      for (const auto& g : e.at("guesses"))
        if (g.at("check") == check) return g;
  throw std::runtime_error("no guess '" + check + "' of " + experiment + " in results.json");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// With every run of blanks and line breaks made one space: CMake wraps the messages it prints.
std::string unwrapped(const std::string& text) { return std::regex_replace(text, std::regex("\\s+"), " "); }

}  // namespace

TEST_CASE("the installed tree holds the command, the bundled plugins, only the public headers and the package, and names no prefix") {
  CHECK(fs::is_regular_file(expr_binary));
  CHECK(fs::is_regular_file(prefix / "lib/cmake/expr/exprConfig.cmake"));
  CHECK(fs::is_regular_file(prefix / "lib/cmake/expr/exprConfigVersion.cmake"));
  CHECK(fs::is_regular_file(prefix / "lib/cmake/expr/ExprPlugin.cmake"));
  CHECK(fs::is_regular_file(prefix / "lib/expr/plugins/cuda_probe.so"));
  std::vector<std::string> headers;
  for (const auto& entry : fs::recursive_directory_iterator(prefix / "include"))
    if (entry.is_regular_file()) headers.push_back(fs::relative(entry.path(), prefix / "include").string());
  std::sort(headers.begin(), headers.end());
  std::vector<std::string> expected{"expr/plugin.hpp"};
  if (EXPR_SDK_WITH_TORCH) {
    expected = {"expr/plugin.hpp", "expr_torch/memory_tracer.hpp", "expr_torch/op_tracer.hpp", "expr_torch/tensors.hpp"};
    CHECK(fs::is_regular_file(prefix / "lib/expr/plugins/masked_fill.so"));
    CHECK(fs::is_regular_file(prefix / "lib/libexpr_torch.a"));
  }
  CHECK(headers == expected);
  // The tree was installed elsewhere and moved here: nothing in it may name where it was installed.
  for (const auto& entry : fs::recursive_directory_iterator(prefix))
    if (entry.is_regular_file()) {
      INFO(entry.path().string());
      CHECK_FALSE(contains(slurp(entry.path()), EXPR_SDK_STAGING));
    }
}

TEST_CASE("a scaffolded C++ plugin builds against the installed expr, and its series confirms one guess and contradicts the other") {
  const auto dir = scratch("cpu");
  auto o = sh(dir, expr("new plugin sdk_saxpy --dir project"));
  INFO(o.out);
  REQUIRE(o.exit_code == 0);
  o = build(dir / "project");
  INFO(o.out);
  REQUIRE(o.exit_code == 0);
  // expr_add_plugin's default: where the installed expr finds it, with no plugin path.
  CHECK(fs::is_regular_file(prefix / "lib/expr/plugins/sdk_saxpy.so"));
  o = sh(dir / "project", expr("run sdk_saxpy.yaml --out run"));
  INFO(o.out);
  CHECK(o.exit_code == 0);
  CHECK(contains(o.out, "Guess vs trace: 2 confirmed, 1 contradicted, 0 not evaluable"));
  const auto results = nlohmann::json::parse(slurp(dir / "project/run/results.json"));
  CHECK(guess(results, "saxpy", "rel_error < 1e-6").at("verdict") == "confirmed");
  CHECK(guess(results, "saxpy", "gbps > 1000").at("verdict") == "contradicted");
  CHECK(guess(results, "saxpy", "ranges(\"^saxpy$\") == 1").at("verdict") == "confirmed");
  // `expr list` says where it was found.
  o = sh(dir, expr("list"));
  INFO(o.out);
  CHECK(contains(o.out, "file: " + (prefix / "lib/expr/plugins/sdk_saxpy.so").string() + " (beside expr)"));
}

TEST_CASE("a plugin built with another _GLIBCXX_USE_CXX11_ABI is refused, with both sides named") {
  const auto dir = scratch("old_abi");
  auto o = sh(dir, expr("new plugin sdk_old_abi --dir project"));
  REQUIRE(o.exit_code == 0);
  // Into a directory of its own (relative to the build folder), chosen as a plugin author would,
  // so the prefix stays loadable.
  o = build(dir / "project", "-DEXPR_PLUGIN_DIR=plugins -DCMAKE_CXX_FLAGS=-D_GLIBCXX_USE_CXX11_ABI=0");
  INFO(o.out);
  REQUIRE(o.exit_code == 0);
  REQUIRE(fs::is_regular_file(dir / "project/build/plugins/sdk_old_abi.so"));
  o = sh(dir / "project", "EXPR_PLUGIN_PATH=build/plugins " + expr("validate sdk_old_abi.yaml"));
  INFO(o.out);
  CHECK(o.exit_code == 2);
  CHECK(contains(o.out, "sdk_old_abi.so: built differently from this expr (_GLIBCXX_USE_CXX11_ABI: the plugin 0, this expr 1)"));
}

TEST_CASE("a scaffolded CUDA plugin builds against the installed expr, and runs where there is a GPU or is skipped with the reason") {
  const auto dir = scratch("cuda");
  auto o = sh(dir, expr("new plugin sdk_saxpy_cuda --cuda --dir project"));
  INFO(o.out);
  REQUIRE(o.exit_code == 0);
  o = build(dir / "project", "-DCMAKE_CUDA_COMPILER='" EXPR_SDK_CUDA_COMPILER "' -DCMAKE_CUDA_ARCHITECTURES=" EXPR_SDK_CUDA_ARCHITECTURES);
  INFO(o.out);
  REQUIRE(o.exit_code == 0);
  o = sh(dir / "project", expr("run sdk_saxpy_cuda.yaml --out run"));
  INFO(o.out);
  CHECK(o.exit_code == 0);
  const auto results = nlohmann::json::parse(slurp(dir / "project/run/results.json"));
  const auto& saxpy = results.at("experiments").at(0);
  if (saxpy.at("status") == "skipped") {
    CHECK(contains(saxpy.at("reason").get<std::string>(), "plugin sdk_saxpy_cuda runs only on cuda"));
  } else {
    CHECK(saxpy.at("status") == "ok");
    CHECK(guess(results, "saxpy", "copies == 0").at("verdict") == "confirmed");
    CHECK(guess(results, "saxpy", "gpu_time < 10us").at("verdict") == "contradicted");
    CHECK(guess(results, "saxpy", "kernels(\"saxpy\") == 1").at("verdict") == "confirmed");
  }
}

#if EXPR_SDK_WITH_TORCH
TEST_CASE("a scaffolded LibTorch plugin builds against the installed expr and its LibTorch, and runs with op tracing") {
  const auto dir = scratch("torch");
  auto o = sh(dir, expr("new plugin sdk_linear --torch --dir project"));
  INFO(o.out);
  REQUIRE(o.exit_code == 0);
  o = build(dir / "project");
  INFO(o.out);
  REQUIRE(o.exit_code == 0);
  o = sh(dir / "project", expr("run sdk_linear.yaml --out run"));
  INFO(o.out);
  CHECK(o.exit_code == 0);
  const auto results = nlohmann::json::parse(slurp(dir / "project/run/results.json"));
  CHECK(guess(results, "linear", "ops(\"^aten::add_?$\") == 0").at("verdict") == "confirmed");
  CHECK(guess(results, "linear", "ops(\"^aten::matmul$\") == 1").at("verdict") == "contradicted");
  CHECK(guess(results, "linear", "ops(\"^aten::addmm$\") == 1").at("verdict") == "confirmed");
}

TEST_CASE("a project that finds another LibTorch than expr's is refused when it is configured, naming both") {
  // Another LibTorch, as CMake sees one: a package Torch of another version (nothing else of it
  // is read before the versions are compared).
  const auto dir = scratch("other_libtorch");
  fs::create_directories(dir / "torch");
  std::ofstream(dir / "torch/TorchConfig.cmake") << "set(Torch_FOUND TRUE)\nset(TORCH_LIBRARIES \"\")\n";
  std::ofstream(dir / "torch/TorchConfigVersion.cmake") << "set(PACKAGE_VERSION 0.1.0)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n";
  auto o = sh(dir, expr("new plugin sdk_other_torch --torch --dir project"));
  REQUIRE(o.exit_code == 0);
  o = build(dir / "project", "-DTorch_DIR='" + (dir / "torch").string() + "'");
  INFO(o.out);
  CHECK(o.exit_code != 0);
  CHECK(contains(unwrapped(o.out), "was built with LibTorch " EXPR_SDK_LIBTORCH));
  CHECK(contains(unwrapped(o.out), "but this project found LibTorch 0.1.0 (" + (dir / "torch").string() + ")"));
}

TEST_CASE("the guide's snippets compile against the installed expr, and load") {
  // Every ```cpp block of docs/writing-plugins.md, one plugin each, named as its first line says.
  const auto dir = scratch("guide");
  const auto guide = slurp(fs::path(EXPR_SOURCE_DIR) / "docs/writing-plugins.md");
  std::string cmake =
      "cmake_minimum_required(VERSION 3.24...3.31)\nproject(guide LANGUAGES CXX)\nfind_package(expr REQUIRED COMPONENTS torch)\n";
  std::vector<std::string> names;
  const std::string open = "```cpp\n", close = "\n```";
  std::size_t blocks = 0;
  for (auto at = guide.find(open); at != std::string::npos; at = guide.find(open, at + 1)) {
    ++blocks;
    const auto start = at + open.size();
    const auto code = guide.substr(start, guide.find(close, start) + 1 - start);
    std::smatch first_line;
    if (!std::regex_search(code, first_line, std::regex("^// ([a-z_]+):"))) continue;
    const auto name = first_line[1].str();
    std::ofstream(dir / (name + ".cpp")) << code;
    cmake += "expr_add_plugin(" + name + " " + name + ".cpp OUTPUT_DIRECTORY plugins)\n";
    if (contains(code, "#include <expr_torch/")) cmake += "target_link_libraries(" + name + " PRIVATE expr::torch)\n";
    names.push_back(name);
  }
  INFO("a ```cpp block of the guide must start with a line // NAME: to be compiled as plugin NAME");
  REQUIRE(names.size() == blocks);
  CHECK(blocks >= 3);
  std::ofstream(dir / "CMakeLists.txt") << cmake;
  auto o = build(dir);
  INFO(o.out);
  REQUIRE(o.exit_code == 0);
  o = sh(dir, expr("list --plugin-path build/plugins"));
  INFO(o.out);
  CHECK(o.exit_code == 0);
  for (const auto& name : names) CHECK(contains(o.out, name + " — "));
}
#endif
