#include "util/source.hpp"

namespace expr::util {

std::string SourcePos::str() const {
  std::string s = file.empty() ? "<input>" : file;
  if (line > 0) s += ":" + std::to_string(line);
  if (line > 0 && column > 0) s += ":" + std::to_string(column);
  return s;
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
