// Order statistics, the rank-sum test and Holm's adjustment.
#include "util/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace expr::util {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

double standard_deviation(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(v.size() - 1));
}

namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace

double normal_quantile(double p) {
  // Bisection on the CDF: slower than a rational approximation, but exact to double precision
  // and short enough to check by eye. Called a handful of times per comparison.
  double low = -40, high = 40;
  for (int i = 0; i < 200 && high - low > 1e-15; ++i) {
    const double mid = (low + high) / 2;
    (normal_cdf(mid) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

Interval median_interval(std::vector<double> v, double confidence) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  // P(B <= k) for B ~ Binomial(n, 1/2), accumulated in log space so large n does not underflow.
  const double tail = (1 - confidence) / 2;
  const double log_total = static_cast<double>(n) * std::log(2.0);
  double cumulative = 0;
  std::size_t j = 0;  // the interval is [x_(j+1), x_(n-j)], 1-based; its coverage is 1 - 2 P(B <= j)
  for (std::size_t k = 0; k <= (n - 1) / 2; ++k) {
    cumulative += std::exp(std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
                           std::lgamma(static_cast<double>(n - k) + 1) - log_total);
    if (cumulative > tail) break;
    j = k;
  }
  return {v[j], v[n - 1 - j]};
}

namespace {

// The number of arrangements of m values of one set and n of the other (no ties) with each U, for
// every U from 0 to m*n.
std::vector<double> u_distribution(std::size_t m, std::size_t n) {
  // counts[i][j]: the distribution for i and j values, built up from the recurrence
  // N(u; i, j) = N(u - j; i - 1, j) + N(u; i, j - 1): the largest value belongs to one set or the other.
  std::vector<std::vector<std::vector<double>>> counts(m + 1, std::vector<std::vector<double>>(n + 1));
  for (std::size_t i = 0; i <= m; ++i)
    for (std::size_t j = 0; j <= n; ++j) {
      auto& c = counts[i][j];
      c.assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        c[0] = 1;
        continue;
      }
      for (std::size_t u = 0; u <= i * j; ++u) {
        if (u >= j && u - j < counts[i - 1][j].size()) c[u] += counts[i - 1][j][u - j];
        if (u < counts[i][j - 1].size()) c[u] += counts[i][j - 1][u];
      }
    }
  return counts[m][n];
}

}  // namespace

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t m = a.size(), n = b.size(), total = m + n;
  if (m == 0 || n == 0) return 1;
  // Ranks over both sets, ties given the mean of the ranks they span.
  std::vector<std::pair<double, bool>> all;
  all.reserve(total);
  for (double x : a) all.emplace_back(x, true);
  for (double x : b) all.emplace_back(x, false);
  std::sort(all.begin(), all.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j < total && all[j].first == all[i].first) ++j;
    const double mean_rank = (static_cast<double>(i) + 1 + static_cast<double>(j)) / 2;
    const auto t = static_cast<double>(j - i);
    if (j - i > 1) ties = true;
    tie_term += t * t * t - t;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second) rank_sum_a += mean_rank;
    i = j;
  }
  const double u = rank_sum_a - static_cast<double>(m) * (static_cast<double>(m) + 1) / 2;  // pairs with a above b
  const double mean = static_cast<double>(m) * static_cast<double>(n) / 2;

  if (!ties && m <= 20 && n <= 20) {
    const auto counts = u_distribution(m, n);
    const double arrangements = std::accumulate(counts.begin(), counts.end(), 0.0);
    const auto at = static_cast<std::size_t>(std::llround(u));
    const double below = std::accumulate(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(at) + 1, 0.0);
    const double above = std::accumulate(counts.begin() + static_cast<std::ptrdiff_t>(at), counts.end(), 0.0);
    return std::min(1.0, 2 * std::min(below, above) / arrangements);
  }
  const auto nt = static_cast<double>(total);
  const double variance = static_cast<double>(m) * static_cast<double>(n) / 12 * ((nt + 1) - tie_term / (nt * (nt - 1)));
  if (variance <= 0) return 1;  // every value the same
  const double z = std::max(0.0, std::fabs(u - mean) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t l, std::size_t r) { return p[l] < p[r]; });
  std::vector<double> adjusted(m);
  double running = 0;
  for (std::size_t i = 0; i < m; ++i) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - i) * p[order[i]]));
    adjusted[order[i]] = running;
  }
  return adjusted;
}

}  // namespace expr::util
