#!/usr/bin/env python3
"""Reference values for tests/unit/statistics_test.cpp, computed once by SciPy and statsmodels.

CI has neither, so the values are stored in reference.json beside this script and the unit tests
read them. Made with Debian 12's python3-scipy 1.10.1 and python3-statsmodels 0.13.5:

    /usr/bin/python3 tests/data/statistics/make_reference.py > tests/data/statistics/reference.json

The cases are drawn from a fixed seed, so the file only changes when this script does.
"""
import json
import sys

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.multitest import multipletests

rng = np.random.default_rng(31)


def exact_regime(m, n):
    """expr's rule (util/statistics.hpp): exact when no ties and either side <= 8 or both <= 20."""
    return min(m, n) <= 8 or (m <= 20 and n <= 20)


def mann_whitney_cases():
    sizes = [(1, 1), (1, 2), (2, 2), (3, 3), (4, 4), (5, 5), (1, 60), (2, 40), (3, 25), (8, 200), (7, 9), (12, 15),
             (20, 20), (21, 21), (9, 30), (30, 30), (50, 80), (200, 150)]
    cases = []
    for m, n in sizes:
        for shift in (0.0, 0.5, 2.0):
            for quantum in (None, 1.0):
                a = rng.lognormal(0, 0.3, m) * 10
                b = rng.lognormal(shift * 0.3, 0.3, n) * 10
                if quantum:  # quantised timers: ties
                    a, b = np.round(a / quantum) * quantum, np.round(b / quantum) * quantum
                ties = len(np.unique(np.concatenate([a, b]))) < m + n
                method = "exact" if not ties and exact_regime(m, n) else "asymptotic"
                p = stats.mannwhitneyu(a, b, alternative="two-sided", method=method, use_continuity=True).pvalue
                cases.append({"a": a.tolist(), "b": b.tolist(), "method": method, "p": float(p)})
    return cases


def min_p_cases():
    out = []
    for m, n in [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (8, 8), (1, 60), (3, 100), (10, 10), (20, 20), (21, 21), (40, 40)]:
        a, b = np.arange(m, dtype=float), np.arange(m, m + n, dtype=float)
        method = "exact" if exact_regime(m, n) else "asymptotic"
        out.append({"m": m, "n": n, "p": float(stats.mannwhitneyu(a, b, alternative="two-sided", method=method).pvalue)})
    return out


def holm_cases():
    out = []
    for m in (1, 2, 5, 20, 100):
        for _ in range(3):
            p = rng.uniform(0, 0.2, m) ** 2
            reject, corrected, _, _ = multipletests(p, alpha=0.05, method="holm")
            out.append({"p": p.tolist(), "alpha": 0.05, "adjusted": corrected.tolist(), "reject": reject.tolist()})
    # An adjusted p-value exactly at alpha is rejected.
    p = [0.025, 0.05]
    reject, corrected, _, _ = multipletests(p, alpha=0.05, method="holm")
    out.append({"p": p, "alpha": 0.05, "adjusted": corrected.tolist(), "reject": reject.tolist()})
    return out


def t_cases():
    out = []
    for df in (1, 2, 3, 4, 5, 7, 10, 18, 30, 100, 1000, 1e5):
        for p in (0.6, 0.9, 0.975, 0.9975, 1 - 0.05 / 40, 1 - 0.05 / 200, 1 - 0.05 / 2000, 0.01):
            out.append({"df": df, "p": p, "quantile": float(stats.t.ppf(p, df))})
        for x in (-3.0, 0.0, 0.5, 2.0, 10.0):
            out.append({"df": df, "x": x, "cdf": float(stats.t.cdf(x, df))})
    return out


def normal_cases():
    return [{"p": p, "quantile": float(stats.norm.ppf(p))} for p in (0.5, 0.6, 0.975, 0.9975, 1 - 0.05 / 2000, 1e-6)]


json.dump({"made_by": f"SciPy {scipy.__version__}, statsmodels {statsmodels.__version__}",
           "mann_whitney": mann_whitney_cases(), "mann_whitney_min_p": min_p_cases(), "holm": holm_cases(),
           "student_t": t_cases(), "normal": normal_cases()}, sys.stdout, indent=None)
sys.stdout.write("\n")
