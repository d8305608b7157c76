// Finding and opening plugin libraries. A plugin named `foo` is the file `foo.so` in one of the
// search directories; opening it checks its ABI version before anything else of it runs.
#pragma once

#include <expr/plugin.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace expr::loader {

class LoadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PluginDeleter {
  void operator()(Plugin* p) const { delete p; }
};
using PluginPtr = std::unique_ptr<Plugin, PluginDeleter>;

// An opened plugin library. Libraries stay loaded until the process ends: unloading a library
// that pulled in a framework such as LibTorch is not safe.
class PluginLibrary {
 public:
  // Throws LoadError naming the file and the problem: not a shared library, no expr entry points,
  // another ABI version, or a describe() that throws or names another plugin.
  static std::shared_ptr<const PluginLibrary> open(const std::filesystem::path& file);

  const std::filesystem::path& file() const { return file_; }
  const Description& description() const { return description_; }
  PluginPtr create() const;

 private:
  struct Handle;
  std::shared_ptr<Handle> handle_;
  std::filesystem::path file_;
  Description description_;
  Plugin* (*create_)() = nullptr;
};

// Where plugins are looked for, in order: the series file's plugin_path, then each directory of
// $EXPR_PLUGIN_PATH, then lib/expr/plugins/ beside the expr executable's bin/ (build and install
// trees share that layout).
std::vector<std::filesystem::path> search_path(const std::vector<std::filesystem::path>& series_dirs);

class PluginCatalog {
 public:
  explicit PluginCatalog(std::vector<std::filesystem::path> dirs) : dirs_(std::move(dirs)) {}

  // By name (or a path ending in .so). Throws LoadError: not found (with the directories searched
  // and the closest name) or not loadable.
  std::shared_ptr<const PluginLibrary> find(const std::string& name);

  // Every NAME.so in the search directories (first one wins).
  std::map<std::string, std::filesystem::path> available() const;
  const std::vector<std::filesystem::path>& dirs() const { return dirs_; }

 private:
  std::vector<std::filesystem::path> dirs_;
  std::map<std::string, std::shared_ptr<const PluginLibrary>> opened_;
};

}  // namespace expr::loader
