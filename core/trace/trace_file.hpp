// The native trace file: what a worker hands its parent and what `expr replay` reads back.
// A JSON document with a string table and one integer table per record type, so recorded traces
// stay small enough to keep under tests/data/ and stay readable with any JSON tool.
#pragma once

#include <filesystem>

#include "trace/trace.hpp"

namespace expr::trace {

inline constexpr const char* trace_format = "expr.trace/1";

void save(const Trace& trace, const std::filesystem::path& file);
// Throws std::runtime_error naming the file and what is wrong with it. The result is linked.
Trace load(const std::filesystem::path& file);

}  // namespace expr::trace
