// Shard assignment and the series fingerprint.
#include "series/shard.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <stdexcept>

namespace expr::series {

std::string Shard::str() const { return fmt::format("{}/{}", index, count); }

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto number = [&](std::string_view part, std::size_t& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc{} && end == part.data() + part.size() && !part.empty();
  };
  Shard s;
  const std::string_view all(text);
  if (slash == std::string::npos || !number(all.substr(0, slash), s.index) || !number(all.substr(slash + 1), s.count))
    throw std::invalid_argument(fmt::format("--shard {}: expected K/N, two whole numbers, as in 0/4", text));
  if (s.count == 0 || s.index >= s.count)
    throw std::invalid_argument(fmt::format("--shard {}: K counts from 0 and must be less than N", text));
  return s;
}

std::vector<std::size_t> assign_shards(const Plan& plan, std::size_t count) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < plan.experiments.size(); ++i) out.push_back(i % count);
  return out;
}

std::string fingerprint(const Plan& plan, const std::string& series_text, const std::vector<std::string>& axis_options) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto add = [&](std::string_view part) {
    for (const unsigned char c : part) hash = (hash ^ c) * 1099511628211ull;
    hash = (hash ^ 0xffu) * 1099511628211ull;  // a separator no UTF-8 text holds
  };
  add(series_text);
  for (const auto& a : axis_options) add(a);
  for (const auto& e : plan.experiments) add(e.name);
  return fmt::format("{:016x}", hash);
}

}  // namespace expr::series
