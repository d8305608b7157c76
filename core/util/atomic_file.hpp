// Results are written whole or not at all: a crash mid-write never leaves half a file behind, and
// once written they are on disk (file and directory synced), so a reboot keeps them too.
#pragma once

#include <filesystem>
#include <string_view>

namespace expr::util {

// Writes to a temporary file beside `file`, then renames it over `file`. Throws std::runtime_error
// with the path and the system's reason when the directory is not writable.
void write_atomically(const std::filesystem::path& file, std::string_view contents);

}  // namespace expr::util
