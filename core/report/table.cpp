#include "report/table.hpp"

#include <algorithm>

namespace expr::report {

std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string clip(const std::string& s, std::size_t w) {
  if (display_width(s) <= w) return s;
  std::string out;
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++n > w - 1) break;
    out += s[i];
  }
  return out + "…";
}

std::string Table::text(const std::string& indent, std::size_t max_width, std::size_t keep) const {
  std::vector<std::size_t> widths(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  };
  measure(header);
  for (const auto& r : rows) measure(r);

  // Blocks of columns: each starts with the first `keep` and takes columns while the line fits.
  keep = std::min(keep, header.size());
  std::size_t kept = display_width(indent);
  for (std::size_t i = 0; i < keep; ++i) kept += widths[i] + 2;
  std::vector<std::vector<std::size_t>> blocks;
  std::size_t line_width = 0;
  for (std::size_t i = keep; i < header.size(); ++i) {
    if (blocks.empty() || (line_width + widths[i] > max_width && blocks.back().size() > keep)) {
      blocks.emplace_back();
      for (std::size_t k = 0; k < keep; ++k) blocks.back().push_back(k);
      line_width = kept;
    }
    blocks.back().push_back(i);
    line_width += widths[i] + 2;
  }
  if (blocks.size() > 1) {
    std::string out;
    for (const auto& columns : blocks) {
      Table block{{}, std::vector<std::vector<std::string>>(rows.size())};
      for (const auto c : columns) {
        block.header.push_back(header[c]);
        for (std::size_t r = 0; r < rows.size(); ++r) block.rows[r].push_back(c < rows[r].size() ? rows[r][c] : "");
      }
      out += (out.empty() ? "" : "\n") + block.text(indent);
    }
    return out;
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = indent;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      s += cell;
      if (i + 1 < widths.size()) s += std::string(widths[i] - display_width(cell) + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(header);
  std::string rule = indent;
  for (std::size_t i = 0; i < widths.size(); ++i) rule += std::string(widths[i], '-') + (i + 1 < widths.size() ? "  " : "");
  out += rule + "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string Table::markdown() const {
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += "\\|";
      else if (c == '\n') out += "<br>";
      else out += c;
    }
    return out;
  };
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "|";
    for (std::size_t i = 0; i < header.size(); ++i) s += " " + cell(i < row.size() ? row[i] : "") + " |";
    return s + "\n";
  };
  std::string out = line(header) + "|";
  for (std::size_t i = 0; i < header.size(); ++i) out += " --- |";
  out += "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

}  // namespace expr::report
