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
  // another ABI version, a build that does not match this expr's (EXPR_PLUGIN_BUILD_TAG: compiler
  // family, standard library and its ABI, LibTorch), or a describe() that throws or names another
  // plugin. The library is opened in a child process first (loader/trial.hpp): one whose static
  // constructors or describe() crash, exit or block is a LoadError too, and never reaches expr.
  static std::shared_ptr<const PluginLibrary> open(const std::filesystem::path& file);

  const std::filesystem::path& file() const { return file_; }
  const Description& description() const { return description_; }
  PluginPtr create() const;

 private:
  // Opening itself, in whichever process calls it.
  static std::shared_ptr<const PluginLibrary> load(const std::filesystem::path& file);
  struct Handle;
  std::shared_ptr<Handle> handle_;
  std::filesystem::path file_;
  Description description_;
  Plugin* (*create_)() = nullptr;
};

// Where a search directory came from, shown by `expr list` and in errors.
enum class Origin { plugin_path, option, environment, beside_expr };
std::string to_string(Origin origin);  // "the series' plugin_path", "--plugin-path", ...

struct SearchDir {
  std::filesystem::path path;
  Origin origin;
};

// Where plugins are looked for, in order: `first` (the series file's plugin_path, or `expr list
// --plugin-path`), then each directory of $EXPR_PLUGIN_PATH, then lib/expr/plugins/ beside the
// expr executable's bin/ (the build tree and an installed prefix share that layout; the installed
// tree is relocatable, so no absolute prefix is compiled in).
std::vector<SearchDir> search_path(const std::vector<std::filesystem::path>& first, Origin origin);

// A plugin library found on the search path.
struct Found {
  std::filesystem::path file;
  Origin origin;
};

class PluginCatalog {
 public:
  explicit PluginCatalog(std::vector<SearchDir> dirs) : dirs_(std::move(dirs)) {}

  // By name (or a path ending in .so). Throws LoadError: not found (with the directories searched
  // and the closest name), found in two places (naming both files), or not loadable.
  std::shared_ptr<const PluginLibrary> find(const std::string& name);

  // Every NAME.so in the search directories, each with every place it was found in: one, or more
  // when two directories hold a plugin of the same name (one file reached twice counts once).
  std::map<std::string, std::vector<Found>> available() const;
  const std::vector<SearchDir>& dirs() const { return dirs_; }

  // The error for a name found in more than one place.
  static std::string ambiguity(const std::string& name, const std::vector<Found>& places);

 private:
  std::vector<SearchDir> dirs_;
  std::map<std::string, std::shared_ptr<const PluginLibrary>> opened_;
};

}  // namespace expr::loader
