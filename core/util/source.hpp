// Where something was written, and the one renderer of the problems found there. Every stage
// reports bad input as a Problem, and Problem::str() shows each the same way, whether it is in a
// series file, in a guess inside it (a YAML block scalar included) or in a guess a plugin returned:
//
//   series.yaml:7:21: error: kernel has no figure 'ocupancy'; did you mean 'occupancy'?
//         - kernel("x").ocupancy > 10%
//                       ^~~~~~~~
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace expr::util {

// A text that positions point into (a series file, a plugin's guess), kept so that a problem can
// quote the line it is about.
class SourceText {
 public:
  SourceText(std::string name, std::string text);
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // The byte offset of a 1-based line and column, clamped to the text.
  std::size_t offset(int line, int column) const;
  // The 1-based line and column (counted in bytes) of a byte offset.
  std::pair<int, int> line_column(std::size_t offset) const;
  // Line n (1-based) without its line break; empty past the end.
  std::string_view line(int n) const;

 private:
  std::size_t line_length(int n) const;

  std::string name_, text_;
  std::vector<std::size_t> line_starts_;
};

struct SourcePos {
  SourcePos() = default;
  SourcePos(std::string file, int line, int column, int length = 1, std::shared_ptr<const SourceText> source = nullptr)
      : file(std::move(file)), line(line), column(column), length(length), source(std::move(source)) {}

  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based, in bytes as editors and compilers count; 0 when unknown
  int length = 1;  // bytes of the offending text from column on, on that line
  std::shared_ptr<const SourceText> source;  // to quote the line; null when the text is not at hand
  SourcePos shifted(int columns) const { return {file, line, column + columns, length, source}; }
  std::string str() const;  // file:line:column
};

// A line quoted under a message, and the part of it to mark.
struct Excerpt {
  std::string line;
  std::size_t begin = 0, end = 0;  // bytes [begin, end) of line are marked: ^ then ~ under the rest
};

// The line of `source` holding bytes [begin, end), with those bytes marked (up to the line's end).
Excerpt excerpt(const SourceText& source, std::size_t begin, std::size_t end);

struct Problem {
  Problem(SourcePos pos, std::string message, std::optional<Excerpt> quote = std::nullopt)
      : pos(std::move(pos)), message(std::move(message)), quote(std::move(quote)) {}

  SourcePos pos;
  std::string message;
  std::optional<Excerpt> quote;  // what to quote; when absent, the line at pos, from its source

  // The renderer: "file:line:column: error: message", then the quoted line and the marker under
  // it, both indented by four spaces.
  std::string str() const;
};

// Where each byte of a text taken from a source was written. A value read from a file is not always
// the bytes written there (a YAML scalar loses its quotes, escapes, indentation and folded line
// breaks), so an offset into the value is mapped to the file, never added to where it starts.
class TextOrigin {
 public:
  TextOrigin() = default;
  // The mapping is unknown: every offset is reported at `start`.
  explicit TextOrigin(SourcePos start);
  // source_offsets[i]: where byte i of the value was written in `source`, plus one entry for the
  // value's end. Offsets must not decrease.
  TextOrigin(std::shared_ptr<const SourceText> source, std::vector<std::size_t> source_offsets);
  // A text that no file holds (a plugin's guess, one stored in a run): its problems are reported at
  // `where` and quote the text itself.
  static TextOrigin detached(SourcePos where, std::string text);

  // Where bytes [begin, end) of the value were written (for a detached text: `where`).
  SourcePos at(std::size_t begin, std::size_t end) const;
  // A problem with bytes [begin, end) of the value, quoted and marked where they were written.
  Problem problem(std::size_t begin, std::size_t end, std::string message) const;

 private:
  SourcePos start_;
  std::shared_ptr<const SourceText> source_;
  std::vector<std::size_t> source_offsets_;  // empty: unknown, or detached
  bool detached_ = false;                    // source_ is the text itself, reported at start_
};

// Bad input found before anything ran: every problem, each with its place.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Problem> problems);
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::vector<Problem> problems_;
};

}  // namespace expr::util
