// A table of text cells, printed aligned for a terminal or as Markdown.
#pragma once

#include <string>
#include <vector>

namespace expr::report {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  std::string text(const std::string& indent = "") const;
  std::string markdown() const;
};

// Cuts long names (kernel names run to hundreds of characters) to `width`, ending in "…".
std::string clip(const std::string& s, std::size_t width);

}  // namespace expr::report
