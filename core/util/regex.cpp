// RE2 behind util::Regex: see regex.hpp.
#include "util/regex.hpp"

#include <re2/re2.h>

#include <string>

namespace expr::util {

Regex::Regex(std::string_view pattern) {
  RE2::Options options;
  options.set_encoding(RE2::Options::EncodingLatin1);
  options.set_log_errors(false);  // the error is ours to report, not RE2's to print
  auto re = std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) throw RegexError(re->error());
  re_ = std::move(re);
}

bool Regex::search(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

std::optional<Regex::Groups> Regex::full_match(std::string_view text) const {
  const auto count = static_cast<std::size_t>(re_->NumberOfCapturingGroups()) + 1;
  std::vector<re2::StringPiece> found(count);
  if (!re_->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::ANCHOR_BOTH, found.data(), static_cast<int>(count)))
    return std::nullopt;
  Groups groups;
  for (const auto& g : found) groups.push_back(g.data() ? std::optional<std::string_view>(std::string_view(g.data(), g.size())) : std::nullopt);
  return groups;
}

}  // namespace expr::util
