// Shard assignment and the series fingerprint.
#include "series/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
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

std::vector<std::size_t> assign_shards(const Plan& plan, const std::vector<double>& costs, std::size_t count) {
  const auto n = plan.experiments.size();
  if (costs.size() != n) throw std::invalid_argument(fmt::format("{} costs for {} experiments", costs.size(), n));
  for (const auto c : costs)
    if (!std::isfinite(c) || c < 0) throw std::invalid_argument(fmt::format("an experiment's expected cost is {}", c));
  if (count == 0) throw std::invalid_argument("0 shards");
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (costs[a] != costs[b]) return costs[a] > costs[b];
    return plan.experiments[a].name < plan.experiments[b].name;
  });
  // Each shard's load is the sum of its costs and, to break ties between equal sums, its count of
  // experiments: with all costs 0 (or equal) the experiments still spread evenly.
  std::vector<std::pair<double, std::size_t>> load(count, {0.0, 0});
  std::vector<std::size_t> out(n);
  for (const auto i : order) {
    const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[i] = least;
    load[least].first += costs[i];
    ++load[least].second;
  }
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
