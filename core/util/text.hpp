// Small text helpers shared by the series checker, the expectation language and the reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace expr::util {

// The candidate closest to `word` by edit distance (a swap of two neighbours counting as one
// edit), if it is close enough to be a likely typo.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b or c"
std::string one_of(const std::vector<std::string>& words);

// A value as a message quotes it: one longer than 40 bytes is cut there (at a character's start)
// and ends in "…", so that a hostile 30,000-digit number gives a message one can read.
std::string shortened(std::string_view text);
// An ECMAScript regex that matches exactly these words, their special characters escaped:
// "^sdpa\[seq=2048\]$", "^(a|b)$". What --filter needs to run these experiments and no other.
std::string exactly(const std::vector<std::string>& words);
// The offset of the first byte that is not part of well-formed UTF-8 (no overlong forms, no
// surrogates, nothing above U+10FFFF), or npos.
std::size_t first_invalid_utf8(std::string_view s);

// `s` with each byte that is not part of well-formed UTF-8 replaced by U+FFFD, for outputs that
// must be UTF-8 (junit.xml) while a plugin's strings need not be.
std::string valid_utf8(std::string_view s);

// `text` without the white space (spaces, tabs, line breaks) around it.
std::string_view trimmed(std::string_view text);

}  // namespace expr::util
