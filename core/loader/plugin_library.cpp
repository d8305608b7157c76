#include "loader/plugin_library.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <boost/dll/shared_library.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include "loader/trial.hpp"
#include "util/text.hpp"

namespace expr::loader {

namespace fs = std::filesystem;

struct PluginLibrary::Handle {
  boost::dll::shared_library library;
};

namespace {

const char* const abi_symbol = plugin_abi_symbol;
const char* const build_tag_symbol = plugin_build_tag_symbol;
const char* const create_symbol = plugin_create_symbol;

std::string dl_reason() {
  const char* e = ::dlerror();
  return e ? e : "unknown reason";
}

#if defined(__x86_64__)
constexpr std::uint16_t host_machine = EM_X86_64;
#elif defined(__aarch64__)
constexpr std::uint16_t host_machine = EM_AARCH64;
#else
#error "expr's plugin loader knows the ELF machine of x86-64 and AArch64 hosts only"
#endif

// No plugin comes near this; a file that does is no plugin.
constexpr std::uintmax_t max_plugin_bytes = std::uintmax_t{4} << 30;

// Whether `count` entries of `size` bytes from `offset` lie inside a file of `file_size` bytes.
bool inside(std::uint64_t offset, std::uint64_t count, std::uint64_t size, std::uintmax_t file_size) {
  return offset <= file_size && count * size <= file_size - offset;  // count, size < 2^16: no overflow
}

// Why `file` cannot be a shared library for this machine, or nothing. dlopen maps a library and
// reads its tables in place, so a truncated file kills the process with SIGBUS instead of
// failing: its header, its header tables and every segment it asks to map are checked to lie
// inside the file first.
std::optional<std::string> elf_problem(const fs::path& file) {
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (ec) return fmt::format("cannot be read: {}", ec.message());
  if (!fs::is_regular_file(status)) return std::string("not a regular file");
  const auto size = fs::file_size(file, ec);
  if (ec) return fmt::format("cannot be read: {}", ec.message());
  if (size > max_plugin_bytes) return fmt::format("{} bytes is too large for a plugin", size);

  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header))
    return size < sizeof header ? fmt::format("{} bytes is too short for an ELF header", size) : std::string("cannot be read");
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return std::string("not an ELF file");
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return std::string("not a 64-bit ELF file");
  if (header.e_ident[EI_DATA] != ELFDATA2LSB) return std::string("not a little-endian ELF file");
  if (header.e_machine != host_machine) return fmt::format("built for another machine (ELF machine {}, this one is {})", header.e_machine, host_machine);
  if (header.e_type != ET_DYN) return fmt::format("not a shared library (ELF type {})", header.e_type);
  if (header.e_phnum == 0 || header.e_phentsize != sizeof(Elf64_Phdr) || !inside(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr), size))
    return fmt::format("truncated or damaged: its program header table does not lie inside the file ({} bytes)", size);
  if (header.e_shnum > 0 &&
      (header.e_shentsize != sizeof(Elf64_Shdr) || !inside(header.e_shoff, header.e_shnum, sizeof(Elf64_Shdr), size)))
    return fmt::format("truncated or damaged: its section header table does not lie inside the file ({} bytes)", size);

  std::vector<Elf64_Phdr> segments(header.e_phnum);
  in.seekg(static_cast<std::streamoff>(header.e_phoff));
  if (!in.read(reinterpret_cast<char*>(segments.data()), static_cast<std::streamsize>(segments.size() * sizeof(Elf64_Phdr))))
    return std::string("cannot be read");
  for (const auto& s : segments)
    if (s.p_filesz > 0 && !inside(s.p_offset, 1, s.p_filesz, size))
      return fmt::format("truncated: a segment ends at byte {} but the file has {} bytes", s.p_offset + s.p_filesz, size);
  return std::nullopt;
}

// "key=value;key=value" (EXPR_PLUGIN_BUILD_TAG) as a map.
std::map<std::string, std::string> parse_build_tag(std::string_view tag) {
  std::map<std::string, std::string> fields;
  while (!tag.empty()) {
    const auto end = std::min(tag.find(';'), tag.size());
    const auto field = tag.substr(0, end);
    const auto eq = field.find('=');
    if (eq != std::string_view::npos) fields.emplace(field.substr(0, eq), field.substr(eq + 1));
    tag.remove_prefix(std::min(end + 1, tag.size()));
  }
  return fields;
}

// How a plugin's build differs from this expr's, "" when it does not: one "what: the plugin X,
// this expr Y" per difference. LibTorch counts only where both sides use one.
std::string build_mismatch(std::string_view plugin_tag, std::string_view own_tag) {
  const auto plugin = parse_build_tag(plugin_tag);
  const auto own = parse_build_tag(own_tag);
  const auto value = [](const std::map<std::string, std::string>& fields, const std::string& key) {
    const auto it = fields.find(key);
    return it == fields.end() ? std::string("none") : it->second;
  };
  std::vector<std::string> differences;
  const std::pair<const char*, const char*> compared[] = {
      {"compiler", "compiler family"}, {"stdlib", "C++ standard library"}, {"cxx11_abi", "_GLIBCXX_USE_CXX11_ABI"}};
  for (const auto& [key, what] : compared)
    if (value(plugin, key) != value(own, key))
      differences.push_back(fmt::format("{}: the plugin {}, this expr {}", what, value(plugin, key), value(own, key)));
  if (plugin.count("libtorch") && own.count("libtorch") && plugin.at("libtorch") != own.at("libtorch"))
    differences.push_back(fmt::format("LibTorch: the plugin {}, this expr {}", plugin.at("libtorch"), own.at("libtorch")));
  return fmt::format("{}", fmt::join(differences, "; "));
}

// Whether two paths name one file (a directory on the path twice, a link to a plugin beside it).
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return ec ? a.lexically_normal() == b.lexically_normal() : same;
}

}  // namespace

std::shared_ptr<const PluginLibrary> PluginLibrary::open(const fs::path& file) {
  // Any other trouble finding the file (a symbolic link loop, say) is elf_problem's to name.
  std::error_code exists_error;
  if (!fs::exists(file, exists_error) && !exists_error) throw LoadError(fmt::format("{}: no such plugin file", file.string()));
  if (const auto problem = elf_problem(file))
    throw LoadError(fmt::format("{}: not a loadable shared library: {}", file.string(), *problem));
  open_in_child_first(file, [&] { load(file); }, load_timeout());
  return load(file);
}

std::shared_ptr<const PluginLibrary> PluginLibrary::load(const fs::path& file) {
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
  if (!dll.has(build_tag_symbol))
    throw LoadError(fmt::format("{}: not an expr plugin: it speaks ABI version {} but exports no {}(); define the plugin with "
                                "EXPR_PLUGIN(YourClass)",
                                file.string(), abi, build_tag_symbol));
  const char* tag = dll.get<const char*()>(build_tag_symbol)();
  // This expr's side, made by the same macro: the loader is compiled like a plugin, with
  // EXPR_PLUGIN_LIBTORCH set to the LibTorch expr's own plugins were built with (when they were).
  if (const auto mismatch = build_mismatch(tag ? tag : "", EXPR_PLUGIN_BUILD_TAG); !mismatch.empty())
    throw LoadError(fmt::format("{}: built differently from this expr ({}); the plugin boundary passes C++ standard types, so "
                                "rebuild the plugin against this expr's package (find_package(expr) from its prefix) with the same "
                                "compiler family, standard library and LibTorch",
                                file.string(), mismatch));
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

std::string to_string(Origin origin) {
  switch (origin) {
    case Origin::plugin_path: return "the series' plugin_path";
    case Origin::option: return "--plugin-path";
    case Origin::environment: return "$EXPR_PLUGIN_PATH";
    case Origin::beside_expr: return "beside expr";
  }
  return "?";
}

std::vector<SearchDir> search_path(const std::vector<fs::path>& first, Origin origin) {
  std::vector<SearchDir> dirs;
  for (const auto& d : first) dirs.push_back({d, origin});
  if (const char* env = std::getenv("EXPR_PLUGIN_PATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const auto dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.push_back({fs::path(dir), Origin::environment});
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
  }
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back({exe.parent_path().parent_path() / "lib" / "expr" / "plugins", Origin::beside_expr});  // bin/expr, lib/expr/plugins/NAME.so
  }
  return dirs;
}

std::map<std::string, std::vector<Found>> PluginCatalog::available() const {
  std::map<std::string, std::vector<Found>> found;
  for (const auto& dir : dirs_) {
    // The error_code forms throughout: a directory that cannot be read (or stops being readable
    // half-way) is skipped, and find() names it when a plugin is not found.
    std::error_code ec;
    for (fs::directory_iterator it(dir.path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() != ".so") continue;
      auto& places = found[it->path().stem().string()];
      if (std::none_of(places.begin(), places.end(), [&](const Found& f) { return same_file(f.file, it->path()); }))
        places.push_back({it->path(), dir.origin});
    }
  }
  return found;
}

std::string PluginCatalog::ambiguity(const std::string& name, const std::vector<Found>& places) {
  std::vector<std::string> files;
  for (const auto& f : places) files.push_back(fmt::format("{} ({})", f.file.string(), to_string(f.origin)));
  return fmt::format("two plugins are named '{}': {}; remove or rename one, or take its directory off the plugin path", name,
                     fmt::join(files, " and "));
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
      for (const auto& d : dirs_) {
        std::error_code ec;
        fs::directory_iterator(d.path, ec);
        dirs.push_back(ec ? fmt::format("{} ({})", d.path.string(), ec.message()) : d.path.string());
      }
      throw LoadError(fmt::format("no plugin '{}'{} (searched {}; add a directory with plugin_path in the series or $EXPR_PLUGIN_PATH)",
                                  name, util::did_you_mean(name, names), fmt::join(dirs, ", ")));
    }
    if (it->second.size() > 1) throw LoadError(ambiguity(name, it->second));
    file = it->second.front().file;
  }
  auto lib = PluginLibrary::open(file);
  opened_.emplace(name, lib);
  return lib;
}

}  // namespace expr::loader
