#include "loader/plugin_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <boost/dll/shared_library.hpp>
#include <cstdlib>

#include "util/text.hpp"

namespace expr::loader {

namespace fs = std::filesystem;

struct PluginLibrary::Handle {
  boost::dll::shared_library library;
};

namespace {

const char* const abi_symbol = plugin_abi_symbol;
const char* const create_symbol = plugin_create_symbol;

std::string dl_reason() {
  const char* e = ::dlerror();
  return e ? e : "unknown reason";
}

}  // namespace

std::shared_ptr<const PluginLibrary> PluginLibrary::open(const fs::path& file) {
  if (!fs::exists(file)) throw LoadError(fmt::format("{}: no such plugin file", file.string()));
  auto lib = std::shared_ptr<PluginLibrary>(new PluginLibrary());
  lib->file_ = file;
  lib->handle_ = std::make_shared<Handle>();
  boost::dll::fs::error_code ec;
  lib->handle_->library.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    // Boost's message is generic; the loader's own says which symbol or format is wrong.
    void* probe = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    const std::string why = probe ? ec.message() : dl_reason();
    if (probe) ::dlclose(probe);
    throw LoadError(fmt::format("{}: not a loadable shared library: {}", file.string(), why));
  }
  auto& dll = lib->handle_->library;
  if (!dll.has(abi_symbol) || !dll.has(create_symbol))
    throw LoadError(fmt::format("{}: not an expr plugin: it exports no {}() / {}(); define the plugin with EXPR_PLUGIN(YourClass)",
                                file.string(), abi_symbol, create_symbol));
  const auto abi = dll.get<std::uint32_t()>(abi_symbol)();
  if (abi != plugin_abi_version)
    throw LoadError(fmt::format("{}: built against expr plugin ABI version {}, but this expr speaks version {}; rebuild the plugin "
                                "against this expr's expr/plugin.hpp",
                                file.string(), abi, plugin_abi_version));
  lib->create_ = &dll.get<Plugin*()>(create_symbol);
  try {
    lib->description_ = lib->create()->describe();
  } catch (const std::exception& e) {
    throw LoadError(fmt::format("{}: describe() failed: {}", file.string(), e.what()));
  }
  const auto stem = file.stem().string();
  if (lib->description_.name != stem)
    throw LoadError(fmt::format("{}: the file is named '{}' but the plugin calls itself '{}'; a plugin NAME lives in NAME.so",
                                file.string(), stem, lib->description_.name));
  return lib;
}

PluginPtr PluginLibrary::create() const {
  PluginPtr p(create_());
  if (!p) throw LoadError(fmt::format("{}: {}() returned no plugin", file_.string(), create_symbol));
  return p;
}

std::vector<fs::path> search_path(const std::vector<fs::path>& series_dirs) {
  std::vector<fs::path> dirs = series_dirs;
  if (const char* env = std::getenv("EXPR_PLUGIN_PATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const auto dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
  }
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(exe.parent_path().parent_path() / "lib" / "expr" / "plugins");  // bin/expr, lib/expr/plugins/NAME.so
  }
  return dirs;
}

std::map<std::string, fs::path> PluginCatalog::available() const {
  std::map<std::string, fs::path> found;
  for (const auto& dir : dirs_) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".so") found.try_emplace(entry.path().stem().string(), entry.path());
  }
  return found;
}

std::shared_ptr<const PluginLibrary> PluginCatalog::find(const std::string& name) {
  if (auto it = opened_.find(name); it != opened_.end()) return it->second;
  fs::path file;
  if (name.ends_with(".so")) {
    file = name;
  } else {
    const auto all = available();
    auto it = all.find(name);
    if (it == all.end()) {
      std::vector<std::string> names, dirs;
      for (const auto& [n, _] : all) names.push_back(n);
      for (const auto& d : dirs_) dirs.push_back(d.string());
      throw LoadError(fmt::format("no plugin '{}'{} (searched {}; add a directory with plugin_path in the series or $EXPR_PLUGIN_PATH)",
                                  name, util::did_you_mean(name, names), fmt::join(dirs, ", ")));
    }
    file = it->second;
  }
  auto lib = PluginLibrary::open(file);
  opened_.emplace(name, lib);
  return lib;
}

}  // namespace expr::loader
