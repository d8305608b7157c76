// Small text helpers (text.hpp).
#include "util/text.hpp"

#include <algorithm>
#include <numeric>

namespace expr::util {

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (no overlong forms, no surrogates, nothing
// above U+10FFFF), or 0 when the byte there starts none.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) length = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    if (c == 0xE0) low = 0xA0;   // overlong
    if (c == 0xED) high = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    if (c == 0xF0) low = 0x90;   // overlong
    if (c == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if (i + k >= s.size()) return 0;
    const auto next = static_cast<unsigned char>(s[i + k]);
    if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xBF)) return 0;
  }
  return length;
}

// Edits (insert, delete, replace, or swap two neighbours: "fsued" is one from "fused") between a
// and b, by optimal string alignment: three rows of the table, the one two above for swaps.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> two_above(b.size() + 1), above(b.size() + 1), row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    two_above.swap(above);
    above.swap(row);
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({above[j] + 1, row[j - 1] + 1, above[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], two_above[j - 2] + 1);
    }
  }
  return row[b.size()];
}
}  // namespace

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& c : candidates) {
    const auto d = edit_distance(word, c);
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A third of the word may be wrong, and always at least one character.
  if (best && best_distance <= std::max<std::size_t>(1, word.size() / 3)) return best;
  return std::nullopt;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const auto c = closest(word, candidates);
  return c ? "; did you mean '" + *c + "'?" : "";
}

std::string one_of(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

std::string shortened(std::string_view text) {
  constexpr std::size_t keep = 40;
  if (text.size() <= keep) return std::string(text);
  std::size_t cut = keep;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return std::string(text.substr(0, cut)) + "…";
}

std::string exactly(const std::vector<std::string>& words) {
  std::string alternatives;
  for (const auto& word : words) {
    if (!alternatives.empty()) alternatives += '|';
    for (char ch : word) {
      if (std::string_view("\\^$.|?*+()[]{}").find(ch) != std::string_view::npos) alternatives += '\\';
      alternatives += ch;
    }
  }
  return words.size() == 1 ? "^" + alternatives + "$" : "^(" + alternatives + ")$";
}

std::size_t first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto length = utf8_sequence(s, i);
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto length = utf8_sequence(s, i);
    if (length == 0) {
      out += "\uFFFD";
      ++i;
    } else {
      out.append(s.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string_view trimmed(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

}  // namespace expr::util
