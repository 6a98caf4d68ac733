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

POWER = 0.8
MAX_SEEDS = 1000  # beyond this the answer is "more than 1,000": no sweep will run that


def power(n: int, effect: float, alpha: float) -> float:
    """Power of the two-sided t-test with ``n`` runs per group at standardised ``effect`` (d)."""
    return power_at(float(n), effect, alpha)


def seeds_needed(effect: float, alpha: float) -> int | None:
    """The smallest n per group with power >= POWER (None: more than MAX_SEEDS, or no effect)."""
    if not math.isfinite(effect) or effect == 0:
        return None
    effect = abs(effect)
    if power(MAX_SEEDS, effect, alpha) < POWER:
        return None
    low, high = 2, MAX_SEEDS  # power grows with n: bisect for the first n that reaches POWER
    if power(low, effect, alpha) >= POWER:
        return low
    while high - low > 1:
        mid = (low + high) // 2
        if power(mid, effect, alpha) >= POWER:
            high = mid
        else:
            low = mid
    return high


def detectable(n_arm: int, n_base: int, sd: float, alpha: float) -> float | None:
    """The smallest difference detected with POWER at the current seeds (their harmonic mean per group)."""
    from scipy import optimize

    if min(n_arm, n_base) < 2 or not math.isfinite(sd) or sd <= 0:
        return None
    n = 2 / (1 / n_arm + 1 / n_base)  # the equal-group size with the same standard error
    if power_at(n, 100.0, alpha) < POWER:
        return None
    d = float(optimize.brentq(lambda e: power_at(n, e, alpha) - POWER, 1e-9, 100.0, xtol=1e-10))
    return d * sd


def power_at(n: float, effect: float, alpha: float) -> float:
    """``power`` for a (possibly fractional) equal-group size ``n``."""
    from scipy import stats

    df = max(2 * n - 2, 1.0)
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    nc = effect * math.sqrt(n / 2)
    result = float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))
    if math.isnan(result):  # nct's series fails far in the tail, where the power is 1 to any digit shown
        return float(stats.norm.sf(crit - nc) + stats.norm.cdf(-crit - nc))
    return result


def pooled_sd(var_arm: float, var_base: float) -> float:
    return math.sqrt((var_arm + var_base) / 2)
