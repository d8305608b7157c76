// Paths made from data, checked by one rule (util/paths.hpp).
#include "util/paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "util/text.hpp"

namespace expr::util {

namespace fs = std::filesystem;

std::optional<std::string> file_name_problem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name == "." || name == "..") return fmt::format("'{}' names a directory, not a file in it", name);
  if (name.size() > NAME_MAX) return fmt::format("it is {} bytes long, and a file name holds at most {}", name.size(), NAME_MAX);
  const auto bad = std::find_if(name.begin(), name.end(), [](char c) { return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (bad != name.end())
    return *bad == '/' || *bad == '\\' ? fmt::format("it holds '{}', which would make it a path", *bad)
                                       : fmt::format("it holds the control character 0x{:02x}", static_cast<unsigned char>(*bad));
  return std::nullopt;
}

fs::path inside(const fs::path& root, std::string_view recorded) {
  const fs::path relative(recorded);
  const auto refuse = [&](std::string_view why) {
    throw std::runtime_error(fmt::format("'{}' {}; a run directory's files are read only from inside it", shortened(recorded), why));
  };
  if (recorded.empty()) refuse("is empty");
  if (recorded.find('\0') != std::string_view::npos) refuse("holds a NUL byte");
  if (relative.is_absolute()) refuse("is an absolute path");
  if (std::any_of(relative.begin(), relative.end(), [](const fs::path& part) { return part == ".."; })) refuse("climbs out with '..'");
  // A symbolic link inside the directory may still point out of it: the real paths must nest.
  std::error_code ec;
  const auto real_root = fs::weakly_canonical(root, ec);
  const auto real = fs::weakly_canonical(root / relative, ec);
  if (!ec) {
    const auto mismatch = std::mismatch(real_root.begin(), real_root.end(), real.begin(), real.end());
    if (mismatch.first != real_root.end()) refuse(fmt::format("leads to {} through a symbolic link", real.string()));
  }
  return root / relative;
}

}  // namespace expr::util
