// Statistics on timing samples. Timings are skewed and heavy-tailed (a preempted call takes ten
// times the median), so what decides anything here makes no assumption about their distribution:
// order statistics for the median's interval, ranks for the test between two sets of samples; the
// t distribution only where a standard deviation estimated from a few values sets a threshold.
// Every function refuses values that are not finite (std::invalid_argument): a NaN has no rank and
// no order, and would otherwise decide a verdict silently. tests/data/statistics holds reference
// values from SciPy and statsmodels that the unit tests check these against.
#pragma once

#include <cstddef>
#include <vector>

namespace expr::util {

struct Interval {
  double low = 0, high = 0;
};

// Throws std::invalid_argument naming `what` when a value is NaN or infinite.
void require_finite(const std::vector<double>& values, const char* what);

double median(std::vector<double> values);

// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
double standard_deviation(const std::vector<double>& values);

// The standard normal quantile: the x with P(Z <= x) = p, for 0 < p < 1.
double normal_quantile(double p);

// Student's t distribution with `df` degrees of freedom (df > 0): P(T <= x), and its quantile, the
// x with P(T <= x) = p for 0 < p < 1. Where a standard deviation is estimated from df + 1 values,
// the t quantile, not the normal one, gives a bound that holds at the level asked for.
double student_t_cdf(double x, double df);
double student_t_quantile(double p, double df);

// A confidence interval for the median of the distribution the samples come from, from their order
// statistics: [x_(j), x_(n+1-j)] with the largest j for which P(Binomial(n, 1/2) < j) <= (1 -
// confidence) / 2. Distribution-free. With too few samples for the level (fewer than
// median_interval_min_samples) it is [min, max], whose coverage 1 - 2^(1-n) is then below the level
// asked for.
Interval median_interval(std::vector<double> samples, double confidence);
// The fewest samples whose [min, max] covers the median at `confidence`: 6 at 95%.
std::size_t median_interval_min_samples(double confidence);

// The two-sided p-value of the Mann-Whitney U test (Wilcoxon rank-sum): how likely samples at
// least this far apart in rank are if both sets come from one distribution. As SciPy's
// mannwhitneyu (method "auto", extended): exact (every arrangement counted) when no value repeats
// and either set has at most 8 samples or both at most 20; otherwise the normal approximation with
// the correction for ties and the continuity correction. 1 when either set is empty.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);
// The smallest p-value mann_whitney_p can give for sets of these sizes (the two completely apart):
// 1, 1/3, 0.1, 0.029 for 1 to 4 samples a side. A test whose smallest p cannot pass its level can
// never find a change, however large.
double mann_whitney_min_p(std::size_t m, std::size_t n);

// Holm's step-down adjustment of p-values for testing them all at once: rejecting every adjusted
// p-value at or below alpha (as statsmodels' multipletests) keeps the chance of any false
// rejection below alpha, whatever the dependence between the tests. Parallel to `p`.
std::vector<double> holm_adjust(const std::vector<double>& p);

}  // namespace expr::util
