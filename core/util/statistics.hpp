// Statistics on timing samples. Timings are skewed and heavy-tailed (a preempted call takes ten
// times the median), so what decides anything here makes no assumption about their distribution:
// order statistics for the median's interval, ranks for the test between two sets of samples.
#pragma once

#include <vector>

namespace expr::util {

struct Interval {
  double low = 0, high = 0;
};

double median(std::vector<double> values);

// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
double standard_deviation(const std::vector<double>& values);

// The standard normal quantile: the x with P(Z <= x) = p, for 0 < p < 1.
double normal_quantile(double p);

// A confidence interval for the median of the distribution the samples come from, from their order
// statistics: [x_(j), x_(n+1-j)] with the largest j for which P(Binomial(n, 1/2) < j) <= (1 -
// confidence) / 2. Distribution-free. With too few samples for the level (fewer than 6 at 95%) it
// is [min, max], whose coverage 1 - 2^(1-n) is then below the level asked for.
Interval median_interval(std::vector<double> samples, double confidence);

// The two-sided p-value of the Mann-Whitney U test (Wilcoxon rank-sum): how likely samples at
// least this far apart in rank are if both sets come from one distribution. Exact (by counting
// every arrangement) when both sets have at most 20 samples and no value repeats; otherwise the
// normal approximation with the correction for ties and the continuity correction. 1 when either
// set is empty.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

// Holm's step-down adjustment of p-values for testing them all at once: rejecting every adjusted
// p-value below alpha keeps the chance of any false rejection below alpha, whatever the
// dependence between the tests. Parallel to `p`.
std::vector<double> holm_adjust(const std::vector<double>& p);

}  // namespace expr::util
