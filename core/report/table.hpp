// A table of text cells, printed aligned for a terminal or as Markdown.
#pragma once

#include <string>
#include <vector>

namespace expr::report {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  // Aligned columns. A table wider than `max_width` characters comes in blocks of columns, one
  // under the other, each within it where the columns allow and each repeating the first `keep`.
  std::string text(const std::string& indent = "", std::size_t max_width = std::string::npos, std::size_t keep = 0) const;
  std::string markdown() const;
};

// How many columns `s` takes on a terminal: its UTF-8 characters, so that "µs" and "✓" align.
std::size_t display_width(const std::string& s);

// Cuts long names (kernel names run to hundreds of characters) to `width`, ending in "…".
std::string clip(const std::string& s, std::size_t width);

}  // namespace expr::report
