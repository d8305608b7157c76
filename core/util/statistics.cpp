// Order statistics, the rank-sum test, Holm's adjustment and Student's t distribution.
#include "util/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace expr::util {

void require_finite(const std::vector<double>& values, const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw std::invalid_argument(std::string(what) + " must be finite numbers, and value " + std::to_string(i + 1) + " of " +
                                  std::to_string(values.size()) + " is " + (std::isnan(values[i]) ? "NaN" : values[i] > 0 ? "inf" : "-inf"));
}

double median(std::vector<double> v) {
  require_finite(v, "values whose median is taken");
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

double standard_deviation(const std::vector<double>& v) {
  require_finite(v, "values whose standard deviation is taken");
  if (v.size() < 2) return 0;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(v.size() - 1));
}

namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The x in [low, high] where the increasing `cdf` reaches p, by bisection: slower than a rational
// approximation, but exact to double precision and short enough to check by eye. Called a handful
// of times per comparison.
template <class Cdf>
double invert(const Cdf& cdf, double p, double low, double high) {
  for (int i = 0; i < 400 && high - low > 1e-15 * std::max(1.0, std::fabs(low)); ++i) {
    const double mid = (low + high) / 2;
    (cdf(mid) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

void require_probability(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("a quantile needs a probability strictly between 0 and 1, not " + std::to_string(p));
}

// The continued fraction of the regularized incomplete beta function I_x(a, b) (Lentz's method),
// which converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m < 100000; ++m) {
    const double dm = m;
    for (const double coefficient : {dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm)),
                                     -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1))}) {
      d = 1 + coefficient * d;
      d = 1 / (std::fabs(d) < tiny ? tiny : d);
      c = 1 + coefficient / c;
      if (std::fabs(c) < tiny) c = tiny;
      h *= c * d;
    }
    if (std::fabs(c * d - 1) < 1e-16) break;
  }
  return h;
}

double regularized_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

double normal_quantile(double p) {
  require_probability(p);
  return invert(normal_cdf, p, -40, 40);
}

double student_t_cdf(double x, double df) {
  if (!(df > 0) || !std::isfinite(df) || std::isnan(x)) throw std::invalid_argument("the t distribution needs a finite df > 0 and a number");
  if (std::isinf(x)) return x > 0 ? 1 : 0;
  // P(|T| > |x|) = I_{df / (df + x^2)}(df / 2, 1 / 2).
  const double tail = regularized_beta(df / 2, 0.5, df / (df + x * x)) / 2;
  return x > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  require_probability(p);
  if (!(df > 0) || !std::isfinite(df)) throw std::invalid_argument("the t distribution needs a finite df > 0");
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double high = 1;
  while (student_t_cdf(high, df) < p) high *= 2;  // df = 1 at 1 - 1e-6 is 3e5: a few dozen doublings
  return invert([df](double x) { return student_t_cdf(x, df); }, p, 0, high);
}

Interval median_interval(std::vector<double> v, double confidence) {
  require_finite(v, "samples");
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

std::size_t median_interval_min_samples(double confidence) {
  std::size_t n = 1;
  while (1 - std::ldexp(1.0, 1 - static_cast<int>(n)) < confidence) ++n;
  return n;
}

namespace {

// The number of arrangements of m values of one set and n of the other (no ties) with each U, for
// every U from 0 to m*n: the coefficients of the Gaussian binomial [m+n choose k]_q with k the
// smaller size, built as the product over i = 1..k of (1 - q^(N+i)) / (1 - q^i), N the larger size.
// O(k^2 N), so one small side against thousands of samples is cheap. Coefficients below N + 1 (the
// tails a p-value reads) are sums of positive terms only.
std::vector<double> u_distribution(std::size_t m, std::size_t n) {
  const std::size_t k = std::min(m, n), big = std::max(m, n);
  std::vector<double> c(k * big + 1, 0.0);
  c[0] = 1;
  for (std::size_t i = 1; i <= k; ++i) {
    const std::size_t degree = i * big;  // of the product so far, after this step
    for (std::size_t u = degree; u >= big + i; --u) c[u] -= c[u - big - i];
    for (std::size_t u = i; u <= degree; ++u) c[u] += c[u - i];
  }
  return c;
}

bool exact_regime(std::size_t m, std::size_t n) { return std::min(m, n) <= 8 || (m <= 20 && n <= 20); }

double exact_p(std::size_t m, std::size_t n, double u) {
  const auto counts = u_distribution(m, n);
  const double arrangements = std::accumulate(counts.begin(), counts.end(), 0.0);
  // The distribution is symmetric about mn/2: twice the lower tail of the nearer end.
  const auto at = static_cast<std::size_t>(std::llround(std::min(u, static_cast<double>(m * n) - u)));
  const double tail = std::accumulate(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(at) + 1, 0.0);
  return std::min(1.0, 2 * tail / arrangements);
}

double normal_p(std::size_t m, std::size_t n, double u, double tie_term) {
  const auto nt = static_cast<double>(m + n);
  const double variance = static_cast<double>(m) * static_cast<double>(n) / 12 * ((nt + 1) - tie_term / (nt * (nt - 1)));
  if (variance <= 0) return 1;  // every value the same
  const double mean = static_cast<double>(m) * static_cast<double>(n) / 2;
  const double z = std::max(0.0, std::fabs(u - mean) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

}  // namespace

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  require_finite(a, "samples");
  require_finite(b, "samples");
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
  return !ties && exact_regime(m, n) ? exact_p(m, n, u) : normal_p(m, n, u, tie_term);
}

double mann_whitney_min_p(std::size_t m, std::size_t n) {
  if (m == 0 || n == 0) return 1;
  return exact_regime(m, n) ? exact_p(m, n, 0) : normal_p(m, n, 0, 0);
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  require_finite(p, "p-values");
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
