"""The confidence intervals of the evaluation reports: a mean with its 95% Student t interval, and
the Wilson interval of a proportion (win rates)."""

from __future__ import annotations

import math
from collections.abc import Sequence

_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (a table, then Cornish–Fisher)."""
    if df < 1:
        return float("nan")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mean_ci95(values: Sequence[float]) -> tuple[float, float, float, float]:
    """Mean, 95% t interval (lo, hi) and standard error of ``values``."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan"), float("nan"), float("nan")
    mean = sum(values) / n
    if n == 1:
        return mean, float("nan"), float("nan"), float("nan")
    var = sum((x - mean) ** 2 for x in values) / (n - 1)
    se = math.sqrt(var / n)
    half = t_quantile_975(n - 1) * se
    return mean, mean - half, mean + half, se


def wilson_ci95(successes: float, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval of a proportion (draws may count as half a success)."""
    if n == 0:
        return float("nan"), float("nan")
    z = 1.959964
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


__all__ = ["mean_ci95", "t_quantile_975", "wilson_ci95"]
