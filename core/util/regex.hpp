// The one regex engine: RE2. Guesses search user regexes in kernel names (cuDNN's run past 200
// characters, a plugin's may be far longer) and parsers match user text. RE2 runs in time linear
// in the text and never recurses on it, so neither a 10,000-character name nor a pattern such as
// (a*)*b can hang or overflow the stack, which libstdc++'s std::regex does (its matcher recurses
// once per character and backtracks exponentially).
//
// The syntax is ECMAScript's for what docs/expectations.md promises: literals, `.`, classes and
// `\d \w \s \b`, `^ $`, alternation, groups and `(?:...)`, `* + ? {n,m}` and their lazy forms.
// Not supported, and refused with RE2's reason: backreferences (`\1`), lookahead and lookbehind,
// repetition counts above 1000. Text is matched byte by byte (Latin-1), as std::regex matched it.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace expr::util {

struct RegexError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Regex {
 public:
  // Throws RegexError with RE2's reason ("missing ): (") when the pattern is not valid.
  explicit Regex(std::string_view pattern);

  // The pattern matches somewhere in `text`.
  bool search(std::string_view text) const;

  // When the pattern matches all of `text`: group 0 is the text, then each capturing group, empty
  // where the group took no part in the match.
  using Groups = std::vector<std::optional<std::string_view>>;
  std::optional<Groups> full_match(std::string_view text) const;

 private:
  std::shared_ptr<const re2::RE2> re_;  // shared: copies of a Regex are cheap
};

}  // namespace expr::util
