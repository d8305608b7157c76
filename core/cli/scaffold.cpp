// `expr new`: a plugin project that builds against the installed expr and runs as it stands, and
// a commented series file. The templates show the final hooks (expr/plugin.hpp): setup prepares
// inputs only, run is the measured work, verify checks the first call's output.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/scaffold_templates.hpp"
#include "loader/plugin_library.hpp"
#include "series/series.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

namespace {

// ---- The templates: files under cli/templates/, embedded at build time (cmake/EmbedFiles.cmake) ---
// @NAME@ is the plugin's name, @CLASS@ its class, @SOURCE@ its source file, @PREFIX@ the prefix of
// the expr that wrote them and @EXPR@ that expr. @PROJECT@, @FIND@, @LINK@ and @NOTE@ are what
// differs by kind (below); @LINK@ stands alone on its line and stands for whole lines, none for a
// plugin that links nothing.

struct Kind {
  std::string flag;  // "", " --torch", " --cuda"
  std::string extension;
  std::string_view source;
  std::string_view series;
  std::string project, find, link, note;
};

Kind kind_of(PluginKind kind) {
  switch (kind) {
    case PluginKind::torch:
      return {" --torch", ".cpp", templates::plugin_torch_cpp, templates::plugin_torch_yaml, "project(@NAME@ LANGUAGES CXX)",
              "# expr::torch: expr's LibTorch helpers, with the LibTorch expr was built with.\n"
              "find_package(expr REQUIRED COMPONENTS torch)",
              "target_link_libraries(@NAME@ PRIVATE expr::torch)\n",
              "\nWith a CUDA LibTorch, LibTorch's own CMake package enables CUDA: nvcc must be on `PATH` (or in\n"
              "`CUDACXX`). The series runs on a GPU where there is one, else on the CPU.\n"};
    case PluginKind::cuda:
      return {" --cuda", ".cu", templates::plugin_cuda_cu, templates::plugin_cuda_yaml,
              "if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})\n"
              "  set(CMAKE_CUDA_ARCHITECTURES native)  # this machine's GPU; -DCMAKE_CUDA_ARCHITECTURES=90 builds for another\n"
              "endif()\n"
              "project(@NAME@ LANGUAGES CXX CUDA)",
              "find_package(CUDAToolkit REQUIRED)\nfind_package(expr REQUIRED)",
              "target_link_libraries(@NAME@ PRIVATE CUDA::cudart)\n",
              "\nThe kernel is compiled for this machine's GPU; on a machine without one, configure with\n"
              "`-DCMAKE_CUDA_ARCHITECTURES=90` (or your GPU's). The series needs a GPU to run.\n"};
    case PluginKind::cpu: break;
  }
  return {"", ".cpp", templates::plugin_cpu_cpp, templates::plugin_cpu_yaml, "project(@NAME@ LANGUAGES CXX)", "find_package(expr REQUIRED)",
          "", ""};
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

// A template with its placeholders replaced, in the order given: what an earlier one puts in may
// hold a later one.
std::string filled(std::string_view template_text, const std::vector<std::pair<std::string, std::string>>& in_order) {
  std::string text(template_text);
  for (const auto& [placeholder, value] : in_order) text = replace_all(std::move(text), placeholder, value);
  return text;
}

// my_plugin -> MyPlugin
std::string class_name(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out.empty() || std::isdigit(static_cast<unsigned char>(out.front())) ? "Plugin" + out : out;
}

// The running expr and its prefix (bin/expr -> the prefix); "installed" when the prefix holds the
// CMake package a plugin project finds.
struct Self {
  fs::path expr, prefix;
  bool installed = false;
};

Self self() {
  std::error_code ec;
  Self s;
  s.expr = fs::read_symlink("/proc/self/exe", ec);
  if (ec) s.expr = "expr";
  s.prefix = s.expr.parent_path().parent_path();
  s.installed = fs::exists(s.prefix / "lib" / "cmake" / "expr" / "exprConfig.cmake", ec);
  return s;
}

// Whether `name` can name a plugin: its file, its series and a C++ class are made from it.
bool valid_name(const std::string& name) {
  static const util::Regex identifier("[A-Za-z_][A-Za-z0-9_]{0,63}");
  return identifier.full_match(name).has_value();
}

// Writes every file, or none when one exists already or the directory cannot be made.
int write_files(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> existing;
  for (const auto& [file, _] : files)
    if (std::error_code ec; fs::exists(dir / file, ec)) existing.push_back((dir / file).string());
  if (!existing.empty()) {
    log::error("{} exist{} already; nothing was written (choose another name or --dir)", fmt::join(existing, ", "),
               existing.size() == 1 ? "s" : "");
    return bad_input;
  }
  try {
    fs::create_directories(dir);
    for (const auto& [file, text] : files) util::write_atomically(dir / file, text);
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return cannot_write;
  }
  for (const auto& [file, _] : files) fmt::print("wrote {}\n", (dir / file).string());
  return ok;
}

}  // namespace

int new_plugin(const std::string& name, PluginKind kind, const std::optional<fs::path>& dir_option) {
  if (!valid_name(name)) {
    log::error("'{}' cannot name a plugin: use letters, digits and _, not starting with a digit (at most 64)", name);
    return bad_input;
  }
  const auto k = kind_of(kind);
  const auto me = self();
  const auto dir = dir_option.value_or(fs::path(name));
  const auto source = name + k.extension;
  // A build tree's expr has no CMake package to build against: the files then name the prefix it
  // is to be installed to, as the note below says, so that the two give one piece of advice.
  const std::string suggested_prefix = "$HOME/expr";
  const auto prefix = me.installed ? me.prefix.string() : suggested_prefix;
  const auto program = me.installed ? me.expr.string() : suggested_prefix + "/bin/expr";
  const auto fill = [&](std::string_view text) {
    return filled(text, {{"@PROJECT@", k.project},
                         {"@FIND@", k.find},
                         {"@LINK@\n", k.link},
                         {"@NOTE@", k.note},
                         {"@FLAG@", k.flag},
                         {"@SOURCE@", source},
                         {"@CLASS@", class_name(name)},
                         {"@PREFIX@", prefix},
                         {"@EXPR@", program},
                         {"@NAME@", name}});
  };
  const int status = write_files(dir, {{"CMakeLists.txt", fill(templates::plugin_project_cmake)},
                                       {source, fill(k.source)},
                                       {name + ".yaml", fill(k.series)},
                                       {"README.md", fill(templates::plugin_readme_md)}});
  if (status == ok && !me.installed)
    fmt::print(stderr,
               "note: this expr ({}) is not an installed one: its prefix has no lib/cmake/expr to build a plugin against. "
               "Install it first:\n  cmake --install {} --prefix {}\nthen {}/README.md builds and runs the plugin with that expr\n",
               me.expr.string(), shell_word(me.prefix.string()), suggested_prefix, dir.string());
  return status;
}

namespace {

// One line a parameter: its default as YAML, its documentation as a comment.
std::string param_lines(const std::vector<ParamSpec>& params) {
  std::string out;
  for (const auto& p : params) {
    auto value = series::to_string(p.default_value);
    if (p.type == ParamType::string) value = fmt::format("\"{}\"", value);
    auto doc = p.doc;
    if (!p.choices.empty()) doc += fmt::format(" (one of {})", fmt::join(p.choices, ", "));
    out += fmt::format("      {:<28}# {}\n", p.name + ": " + value, doc);
  }
  return out;
}

}  // namespace

int new_series(const std::string& name, const std::optional<std::string>& plugin_option, const std::optional<fs::path>& dir_option) {
  if (!valid_name(name)) {
    log::error("'{}' cannot name a series: use letters, digits and _, not starting with a digit (at most 64)", name);
    return bad_input;
  }
  // The plugin: the one asked for, else one called like the series, else the first one found.
  loader::PluginCatalog catalog(loader::search_path({}, loader::Origin::option));
  const auto found = catalog.available();
  std::string plugin = plugin_option.value_or(found.count(name) || found.empty() ? name : found.begin()->first);
  std::string params = "      # its parameters: `expr list` shows them\n";
  if (plugin_option || found.count(plugin)) {
    try {
      params = param_lines(catalog.find(plugin)->description().params);
    } catch (const loader::LoadError& e) {
      log::error("{}", e.what());
      return bad_input;
    }
  }
  std::vector<std::string> names;
  for (const auto& [n, _] : found) names.push_back(n);
  // The parameters go last: what a plugin's documentation says is not a placeholder. @PARAMS@
  // stands alone on its line and stands for whole lines.
  const auto text = filled(templates::series_yaml, {{"@NAME@", name},
                                                    {"@PLUGIN@", plugin},
                                                    {"@FOUND@", names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))},
                                                    {"@PARAMS@\n", params}});
  return write_files(dir_option.value_or(fs::path(".")), {{name + ".yaml", text}});
}

}  // namespace expr::cli
