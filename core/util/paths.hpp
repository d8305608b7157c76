// Paths made from data: a series' name, the experiment names and the trace files a results.json
// records. One rule for all of them, so that no name read from a file (a run directory from
// elsewhere, a CI artifact) leads outside the directory it is meant for: a name becomes one file
// name, never a path, and a recorded file is read only from inside its run directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace expr::util {

// Why `name` cannot be one file name inside a directory, or nothing: it is empty, "." or "..",
// holds a '/', a backslash or a control character (NUL included), or is longer than a file name
// may be (255 bytes).
std::optional<std::string> file_name_problem(std::string_view name);

// `recorded` (a path written in a file of `root`) as a path inside `root`. Throws
// std::runtime_error saying why when it is absolute, climbs with "..", or leads outside `root`
// through a symbolic link.
std::filesystem::path inside(const std::filesystem::path& root, std::string_view recorded);

}  // namespace expr::util
