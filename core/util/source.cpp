#include "util/source.hpp"

#include <algorithm>

namespace expr::util {

SourceText::SourceText(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::size_t SourceText::offset(int line, int column) const {
  if (line < 1) return 0;
  if (static_cast<std::size_t>(line) > line_starts_.size()) return text_.size();
  const std::size_t start = line_starts_[static_cast<std::size_t>(line - 1)];
  return std::min(start + line_length(line), start + static_cast<std::size_t>(std::max(column, 1) - 1));
}

std::pair<int, int> SourceText::line_column(std::size_t offset) const {
  offset = std::min(offset, text_.size());
  const auto next = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const auto line = static_cast<std::size_t>(next - line_starts_.begin());
  return {static_cast<int>(line), static_cast<int>(offset - line_starts_[line - 1] + 1)};
}

std::string_view SourceText::line(int n) const {
  if (n < 1 || static_cast<std::size_t>(n) > line_starts_.size()) return {};
  return std::string_view(text_).substr(line_starts_[static_cast<std::size_t>(n - 1)], line_length(n));
}

// Line n's length without its line break (\n, or \r\n from Windows editors).
std::size_t SourceText::line_length(int n) const {
  const std::size_t start = line_starts_[static_cast<std::size_t>(n - 1)];
  std::size_t end = static_cast<std::size_t>(n) < line_starts_.size() ? line_starts_[static_cast<std::size_t>(n)] - 1 : text_.size();
  if (end > start && text_[end - 1] == '\r') --end;
  return end - start;
}

std::string SourcePos::str() const {
  std::string s = file.empty() ? "<input>" : file;
  if (line > 0) s += ":" + std::to_string(line);
  if (line > 0 && column > 0) s += ":" + std::to_string(column);
  return s;
}

Excerpt excerpt(const SourceText& source, std::size_t begin, std::size_t end) {
  const auto [line, column] = source.line_column(begin);
  const auto text = source.line(line);
  const std::size_t first = std::min(static_cast<std::size_t>(column - 1), text.size());
  const std::size_t last = std::min(text.size(), first + (end > begin ? end - begin : 1));
  return {std::string(text), first, std::max(last, first + 1)};
}

namespace {

// Lines longer than this (a hostile 26,000-character name) are quoted as a window around the mark.
constexpr std::size_t widest_quote = 160;

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Moves a cut back onto the first byte of a UTF-8 character.
std::size_t character_start(std::string_view s, std::size_t i) {
  while (i > 0 && i < s.size() && continuation_byte(s[i])) --i;
  return i;
}

Excerpt window(const Excerpt& e) {
  if (e.line.size() <= widest_quote) return e;
  const std::size_t from = character_start(e.line, e.begin > widest_quote / 3 ? e.begin - widest_quote / 3 : 0);
  const std::size_t to = character_start(e.line, std::min(e.line.size(), from + widest_quote));
  const std::string before = from > 0 ? "..." : "";
  const std::string after = to < e.line.size() ? "..." : "";
  return {before + e.line.substr(from, to - from) + after, e.begin - from + before.size(),
          std::min(e.end, to) - from + before.size()};
}

// Spaces up to the marked bytes (tabs stay tabs, a multi-byte character takes one column), then
// ^ under the first marked character and ~ under the others.
std::string marker(const Excerpt& e) {
  std::string m;
  for (std::size_t i = 0; i < e.begin && i < e.line.size(); ++i)
    if (e.line[i] == '\t') m += '\t';
    else if (!continuation_byte(e.line[i])) m += ' ';
  m += '^';
  for (std::size_t i = e.begin + 1; i < e.end && i < e.line.size(); ++i)
    if (!continuation_byte(e.line[i])) m += '~';
  return m;
}

}  // namespace

std::string Problem::str() const {
  std::string s = pos.str() + ": error: " + message;
  auto quoted = quote;
  if (!quoted && pos.source && pos.line > 0 && pos.column > 0) {
    const auto begin = pos.source->offset(pos.line, pos.column);
    quoted = excerpt(*pos.source, begin, begin + static_cast<std::size_t>(std::max(pos.length, 1)));
  }
  if (quoted) {
    const auto shown = window(*quoted);
    s += "\n    " + shown.line + "\n    " + marker(shown);
  }
  return s;
}

TextOrigin::TextOrigin(SourcePos start) : start_(std::move(start)) {}

TextOrigin::TextOrigin(std::shared_ptr<const SourceText> source, std::vector<std::size_t> source_offsets)
    : source_(std::move(source)), source_offsets_(std::move(source_offsets)) {}

TextOrigin TextOrigin::detached(SourcePos where, std::string text) {
  TextOrigin origin(std::move(where));
  origin.source_ = std::make_shared<const SourceText>("", std::move(text));
  origin.detached_ = true;
  return origin;
}

SourcePos TextOrigin::at(std::size_t begin, std::size_t end) const {
  if (source_offsets_.empty()) return start_;
  const std::size_t last = source_offsets_.size() - 1;
  const std::size_t from = source_offsets_[std::min(begin, last)];
  const std::size_t to = end > begin ? source_offsets_[std::min(end - 1, last)] + 1 : from + 1;
  const auto [line, column] = source_->line_column(from);
  // A range that runs onto the next line (a folded guess) is marked to the end of its first.
  const std::size_t rest_of_line = source_->line(line).size() - static_cast<std::size_t>(column - 1);
  const std::size_t length = std::clamp<std::size_t>(to > from ? to - from : 1, 1, std::max<std::size_t>(rest_of_line, 1));
  return {source_->name(), line, column, static_cast<int>(length), source_};
}

Problem TextOrigin::problem(std::size_t begin, std::size_t end, std::string message) const {
  if (detached_) return {start_, std::move(message), excerpt(*source_, begin, end)};
  return {at(begin, end), std::move(message)};
}

namespace {
std::string join(const std::vector<Problem>& problems) {
  std::string s;
  for (const auto& p : problems) s += (s.empty() ? "" : "\n") + p.str();
  return s;
}
}  // namespace

InputError::InputError(std::vector<Problem> problems) : std::runtime_error(join(problems)), problems_(std::move(problems)) {}

}  // namespace expr::util
