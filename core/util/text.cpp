// Small text helpers (text.hpp).
#include "util/text.hpp"

#include <algorithm>
#include <numeric>

namespace expr::util {

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
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

}  // namespace expr::util
