// Results are written whole or not at all: a crash mid-write never leaves half a file behind, and
// once written they are on disk (file and directory synced), so a reboot keeps them too. A record
// appended to a journal is on disk when the call returns; a crash mid-append can leave only that
// record cut short, which its reader skips.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

namespace expr::util {

// Writes to a temporary file beside `file` and fsyncs it, renames it over `file`, then fsyncs the
// directory. Until the rename, `file` keeps its old contents; on failure the temporary is removed.
// Throws std::runtime_error with the path and the system's reason (a directory that is not
// writable, a full disk).
void write_atomically(const std::filesystem::path& file, std::string_view contents);
// The same for a file made piece by piece: `produce` hands each piece to the function it is given,
// so that a large file (a 10,000-point sweep's results.json) never has to be whole in memory.
using WritePiece = std::function<void(std::string_view)>;
void write_atomically(const std::filesystem::path& file, const std::function<void(const WritePiece&)>& produce);

// Appends `record` to `file` (created when missing, its directory then synced too) and fsyncs it:
// the cost of one record, however long the file. Throws std::runtime_error like write_atomically.
void append_durably(const std::filesystem::path& file, std::string_view record);

}  // namespace expr::util
