// Where something was written, for messages of the form file:line:column: problem.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace expr::util {

struct SourcePos {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
  SourcePos shifted(int columns) const { return {file, line, column + columns}; }
  std::string str() const;
};

struct Problem {
  SourcePos pos;
  std::string message;
  std::string str() const { return pos.str() + ": error: " + message; }
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
