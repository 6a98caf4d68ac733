"""How many seeds would decide: the power of the test `report --compare` actually runs, Welch's
t-test at the level calibrated over the variance ratio (sweepgen.run.report.stats.calibrated), computed
exactly on normal runs by the same one-dimensional integral as its error rate, with the noncentral t
(``scipy.special.nctdtr``) in place of Student's.

For a comparison without evidence: the seeds per group at which a difference the size of the
observed one is detected with ``POWER`` at the comparison's Holm alpha, and the smallest difference
detectable with that power at the seeds it has now. The two groups' spreads are their observed
variances (plugged in, as any sample-size formula does), their ratio included: at 2-6 seeds Welch's
degrees of freedom and the calibrated level cost power that the equal-variance t-test's formula,
used here before, did not count (it printed a seed too few; benchmarks/RESULTS.md §24).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from sweepgen.run.report.stats import calibrated

POWER = 0.8
MAX_SEEDS = 1000  # beyond this the answer is "more than 1,000": no sweep will run that
EXACT_UP_TO = 32  # seeds a group up to which seeds_needed computes each n's own calibrated level


def welch_power(n1: int, n2: int, weight: float, shift: float, alpha: float) -> float:
    """Power of the calibrated Welch test at ``alpha`` with ``n1`` and ``n2`` runs, where the true
    difference is ``shift`` of its true standard errors and ``weight`` is group 1's share of that
    standard error's square (sigma1^2/n1 over the sum)."""
    import numpy as np

    tested_at = calibrated.level(n1, n2, alpha)
    return float(calibrated.rates(np.array([weight]), n1, n2, tested_at, shift=shift)[0])


def power(n: int, effect: float, alpha: float, weight: float = 0.5, *, level: float | None = None) -> float:
    """Power with ``n`` runs per group at standardised ``effect`` d: the difference over the pooled
    standard deviation sqrt((sigma1^2 + sigma2^2) / 2); ``weight``: sigma1^2 / (sigma1^2 + sigma2^2).
    ``level``: Welch's test at that level instead of the calibrated level of ``alpha``."""
    import numpy as np

    if n < 2:
        return 0.0
    tested_at = calibrated.level(n, n, alpha) if level is None else level
    shift = abs(effect) * math.sqrt(n / 2)
    return float(calibrated.rates(np.array([weight]), n, n, tested_at, shift=shift)[0])


def _enough(n: int, effect: float, alpha: float, weight: float) -> bool:
    """Whether ``n`` seeds a group reach POWER. The calibrated level at n + n rises with n (2: 0.036,
    3: 0.041, 5: 0.046, 32: 0.0499 at alpha 0.05; benchmarks/bench_power.py --part levels checks it)
    and is at most alpha, so the levels already computed at other n bound it: the power at the
    nearest above (or alpha) below POWER is not enough, the power at the nearest below at or above
    POWER is. Only between the two (neighbours: a band of well under 1% power) is n's own level
    computed (0.02-0.1 s each). Past EXACT_UP_TO seeds the level at EXACT_UP_TO decides: a lower
    bound, so the seeds printed there reach POWER, at most one more than needed (the power it
    leaves out: < 3e-4 at alpha 0.05, < 5e-3 at 0.0005)."""
    low, high = _bounds(n, alpha)
    if power(n, effect, alpha, weight, level=high) < POWER:
        return False
    if low > 0 and power(n, effect, alpha, weight, level=low) >= POWER:
        return True
    return n <= EXACT_UP_TO and power(n, effect, alpha, weight, level=_level(n, alpha)) >= POWER


_KNOWN: dict[float, dict[int, float]] = {}  # alpha -> {n: the calibrated level at n + n}


def _bounds(n: int, alpha: float) -> tuple[float, float]:
    """The calibrated level at n + n lies between these: levels computed at fewer and more seeds.
    From 3 seeds on only: at Holm levels near 1e-6 the level at 2 + 2 is above the one at 3 + 3."""
    if n == 2:
        return 0.0, alpha
    known = {m: v for m, v in _KNOWN.get(alpha, {}).items() if m > 2}
    high = min((v for m, v in known.items() if m >= n), default=alpha)
    if n > EXACT_UP_TO:
        return _level(EXACT_UP_TO, alpha), high
    return max((v for m, v in known.items() if m <= n), default=0.0), high


def _level(n: int, alpha: float) -> float:
    if len(_KNOWN) > 256:  # one entry per Holm level a report used: bounded all the same
        _KNOWN.clear()
    found = _KNOWN.setdefault(alpha, {})
    if n not in found:
        found[n] = calibrated.level(n, n, alpha)
    return found[n]


def seeds_needed(effect: float, alpha: float, weight: float = 0.5) -> int | None:
    """The smallest n per group with power >= POWER (None: more than MAX_SEEDS, or no effect).
    Power rises with n (a larger shift, more df, a calibrated level nearer alpha): from Guenther's
    approximation of the t-test's n (within a seed or two of the answer), a gallop to bracket the
    crossing, then bisection: 2-4 power evaluations as a rule."""
    if not math.isfinite(effect) or effect == 0:
        return None
    from scipy import stats

    z_level = float(stats.norm.isf(alpha / 2))
    z = z_level + float(stats.norm.ppf(POWER))
    guess = min(max(2, round(2 * (z / effect) ** 2 + z_level**2 / 4)), MAX_SEEDS)

    def enough(n: int) -> bool:
        return n >= 2 and _enough(n, effect, alpha, weight)

    bracket = _bracket(enough, guess)
    if bracket is None:
        return None
    low, high = bracket
    while high - low > 1:  # not enough(low), enough(high)
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def _bracket(enough: Callable[[int], bool], guess: int) -> tuple[int, int] | None:
    """(low, high): not enough at low, enough at high, galloping from ``guess`` (None: not enough
    at MAX_SEEDS)."""
    step = 1
    if enough(guess):
        low, high = guess - 1, guess
        while enough(low):  # enough(1) is False: one run a group has no test
            high, step = low, 2 * step
            low = max(high - step, 1)
        return low, high
    low, high = guess, guess + 1
    while not enough(high):
        if high >= MAX_SEEDS:
            return None
        low, step = high, 2 * step
        high = min(high + step, MAX_SEEDS)
    return low, high


def detectable(n_arm: int, n_base: int, var_arm: float, var_base: float, alpha: float) -> float | None:
    """The smallest difference detected with POWER at the current seeds and observed variances
    (None: a group of one run, no spread, or no level at which the test can reject). Bracketed from
    the z-test's shift at the calibrated level (a t-test needs more), found to 1e-5 relative."""
    from scipy import optimize, stats

    if min(n_arm, n_base) < 2 or not math.isfinite(var_arm + var_base) or var_arm + var_base <= 0:
        return None
    tested_at = calibrated.level(n_arm, n_base, alpha)
    if tested_at <= 0:
        return None
    se2 = var_arm / n_arm + var_base / n_base
    weight = var_arm / n_arm / se2

    def short(shift: float) -> float:
        return welch_power(n_arm, n_base, weight, shift, alpha) - POWER

    low = 0.99 * float(stats.norm.isf(tested_at / 2) + stats.norm.ppf(POWER))  # 0.99: the far tail
    while short(low) > 0:
        low /= 2
    high = 1.25 * low
    while short(high) < 0:  # power rises to 1 with the shift at any level > 0
        low, high = high, 2 * high
    shift = optimize.brentq(short, low, high, xtol=1e-9, rtol=1e-5)
    return float(shift * math.sqrt(se2))


def pooled_sd(var_arm: float, var_base: float) -> float:
    return math.sqrt((var_arm + var_base) / 2)
