"""How many seeds would decide: the power of a two-sided two-sample t-test, through scipy's noncentral
t distribution (``scipy.stats.nct``).

For a comparison without evidence: the seeds per group at which a difference the size of the
observed one is detected with ``POWER`` at the comparison's adjusted alpha, and the smallest
difference detectable with that power at the seeds it has now. The spread is the two groups' pooled
standard deviation (equal groups, equal variances: the textbook sample-size formula, exact through
the noncentral t rather than the normal approximation).
"""

from __future__ import annotations

import math
from typing import Any

POWER = 0.8
MAX_SEEDS = 1000  # beyond this the answer is "more than 1,000": no sweep will run that


def power(n: int, effect: float, alpha: float) -> float:
    """Power of the two-sided t-test with ``n`` runs per group at standardised ``effect`` (d)."""
    return power_at(float(n), effect, alpha)


def seeds_needed(effect: float, alpha: float) -> int | None:
    """The smallest n per group with power >= POWER (None: more than MAX_SEEDS, or no effect)."""
    if not math.isfinite(effect) or effect == 0:
        return None
    import numpy as np
    from scipy import stats

    # the normal approximation's n is a lower bound (a t-test has less power than a z-test at the
    # same n): look from there, a window at a time, every n of a window in one scipy call
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(POWER))
    start = max(2, math.floor(2 * (z / abs(effect)) ** 2))
    while start <= MAX_SEEDS:
        n = np.arange(start, min(start + 64, MAX_SEEDS + 1), dtype=float)
        reached = np.nonzero(_powers(n, abs(effect), alpha) >= POWER)[0]
        if reached.size:
            return int(n[reached[0]])
        start += 64
    return None


def detectable(n_arm: int, n_base: int, sd: float, alpha: float) -> float | None:
    """The smallest difference detected with POWER at the current seeds (their harmonic mean per
    group): power rises with the effect, so two vectorised passes over a log grid (coarse, then
    around the crossing) place it to about 0.1% relative, in three scipy calls."""
    import numpy as np

    if min(n_arm, n_base) < 2 or not math.isfinite(sd) or sd <= 0:
        return None
    n = 2 / (1 / n_arm + 1 / n_base)  # the equal-group size with the same standard error
    grid = np.logspace(-3, 3, 121)
    for _ in range(2):
        powers = _powers(np.full_like(grid, n), grid, alpha)
        above = np.nonzero(powers >= POWER)[0]
        if not above.size:
            return None
        i = int(above[0])
        if i == 0:
            return float(grid[0]) * sd
        grid = np.linspace(grid[i - 1], grid[i], 101)
    return float(grid[int(np.nonzero(_powers(np.full_like(grid, n), grid, alpha) >= POWER)[0][0])]) * sd


def power_at(n: float, effect: float, alpha: float) -> float:
    """``power`` for a (possibly fractional) equal-group size ``n``."""
    import numpy as np

    return float(_powers(np.asarray([n], dtype=float), effect, alpha)[0])


def _powers(n: Any, effect: Any, alpha: float) -> Any:
    """Power at each group size in the array ``n`` (noncentral t; the normal approximation where
    scipy's series fails far in the tail, where the power is 1 to any digit shown)."""
    import numpy as np
    from scipy import stats

    df = np.maximum(2 * n - 2, 1.0)
    crit = stats.t.ppf(1 - alpha / 2, df)
    nc = effect * np.sqrt(n / 2)
    result = stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc)
    failed = np.isnan(result)
    if failed.any():
        normal = stats.norm.sf(crit - nc) + stats.norm.cdf(-crit - nc)
        result = np.where(failed, normal, result)
    return result


def pooled_sd(var_arm: float, var_base: float) -> float:
    return math.sqrt((var_arm + var_base) / 2)
