// A plugin library opened in a child process before expr opens it in its own: its static
// constructors and describe() run there first, so one that crashes, ends the process or blocks
// costs a child, and expr reports it as an error naming the library instead of dying or hanging.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>

namespace expr::loader {

// How long opening one library may take before it counts as blocked: $EXPR_PLUGIN_LOAD_TIMEOUT
// (seconds), 60 by default; a LibTorch plugin loads in a few seconds on a slow disk.
std::chrono::milliseconds load_timeout();

// Runs `open` (which throws LoadError for a library it refuses) in a forked child, for at most
// `timeout`. Returns when it succeeded there; throws LoadError with the child's own message when
// it refused the library, or naming `file` and what happened when the child crashed, exited or
// did not finish in time.
void open_in_child_first(const std::filesystem::path& file, const std::function<void()>& open, std::chrono::milliseconds timeout);

}  // namespace expr::loader
