"""The level of each group's mean interval after `run --until-decided`'s looks, calibrated jointly
over the looks so that it covers its level at the look the group's seeds stopped at.

A fixed-n 95% t interval on the seeds the looks chose covers less (93.85% measured: an arm stops
when its seeds landed far from the baseline's, benchmarks/RESULTS.md §36); the union bound over the
looks (each look's interval at 1 - its share of the 5%) covers at least 95% whatever stopped the
group, but 98.2-99.7% in fact (§40): a group usually runs to a late look, whose share is small.

What this does: one level for every look, the least at which the t interval of each group's mean,
at the look its seeds stopped at, covers ``TARGET`` at every case of a grid simulated with the
schedule's own looks and boundaries (normal runs; the arm ``EFFECTS`` baseline sds from the
baseline, spread ``RATIOS`` times the baseline's; one arm, or ``ARMS`` alike sharing the baseline,
which then runs until all are decided). The interval's pivot (mean - truth) / (sd / sqrt n) does
not depend on the true mean or spread, so a case is only how the looks stop; each look stops an
arm where Welch's p passes the calibrated level (calibrated.level) at its boundary, under Holm's
step-down over the arms still open, as each look runs it (sequential.look; before round fifteen the
model held every arm to Holm's first step, Bonferroni: 0.2-4.3% of three arms' stops came
later in the model than in the looks; the level, set by the one-arm cases where the two agree, did not move:
RESULTS.md, round fifteen). The same draws serve every
level tried (common random numbers, a fixed seed: the level is a function of the schedule), and the
level is where the worst case's coverage, less ``MARGIN`` standard errors of it, reaches
``TARGET``: over the grid it covers 95.5-98% on fresh draws, where the union bound's level covered
98-99.7% (benchmarks/bench_stats_round13.py, RESULTS.md §43); the worst of 48 simulated cases and the
margin keep it above 95%, at the price of ~1 point at its worst case. With one look every group runs
the same seeds whatever they show: the t interval at 95% is exact there. Outside the grid (an effect
between its points, a ratio past 3, more arms) it is measured, not proven. Its cost grows with the
looks (a seed a round to 10: ~1.5 CPU s, to 30: ~6 s, once per schedule and process).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from sweepgen.run.report.stats import calibrated

if TYPE_CHECKING:
    import numpy as np

    from sweepgen.run.report.stats.sequential import Schedule

TARGET = 0.95
EFFECTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)  # the arm's true difference, in baseline sds
RATIOS = (1 / 3, 1.0, 3.0)  # the arm's sd over the baseline's
ARMS = (1, 3)  # arms sharing one baseline
DRAWS = 4000  # per case
MARGIN = 2.0  # standard errors of the worst case's coverage kept above TARGET
SEED = 20261130


@functools.lru_cache(maxsize=64)
def level(schedule: Schedule) -> float:
    """The one level of every look's mean interval under ``schedule`` (cached: a schedule is frozen)."""
    import numpy as np
    from scipy import optimize

    if len(schedule.looks) == 1:  # one look: every group runs max_seeds, chosen by nothing; exact
        return TARGET
    pivots = _pivots(schedule)
    floor = TARGET + MARGIN * math.sqrt(TARGET * (1 - TARGET) / DRAWS)

    def short(log_miss: float) -> float:  # worst coverage at level 1 - exp(log_miss), less the floor
        q = _quantiles(1 - math.exp(log_miss), schedule.max_seeds)
        return min(float(np.mean(p <= q[n])) for p, n in pivots) - floor

    low, high = math.log(1e-6), math.log(1 - TARGET)
    if short(high) >= 0:
        return TARGET
    root = optimize.brentq(short, low, high, xtol=1e-6)
    return 1 - math.exp(root - 1e-6)  # the side where it covers


def _quantiles(level: float, most: int) -> np.ndarray:
    """The t interval's quantile at ``level`` for each n up to ``most`` (index n; 0 and 1 unused)."""
    import numpy as np
    from scipy import special

    n = np.arange(most + 1, dtype=float)
    with np.errstate(invalid="ignore"):
        return -special.stdtrit(n - 1, (1 - level) / 2)  # type: ignore[no-any-return]


def _pivots(schedule: Schedule) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per case and group (each arm, the baseline): |mean - truth| / (sd / sqrt n) at the look its
    seeds stopped at, and that n, over DRAWS sweeps."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    out = []
    for arms in ARMS:
        for ratio in RATIOS:
            for effect in EFFECTS:
                base = rng.normal(size=(DRAWS, schedule.max_seeds))
                each = rng.normal(size=(arms, DRAWS, schedule.max_seeds)) * ratio
                stops = _stops(schedule, each + effect, base)
                out += [_pivot(each[a], stops[a]) for a in range(arms)]
                out.append(_pivot(base, stops.max(axis=0)))
    return out


def _pivot(values: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|mean| / (sd / sqrt n) of each row's first ``n`` values (truth 0: the effect taken off)."""
    import numpy as np

    take = np.arange(values.shape[1]) < n[:, None]
    mean = np.where(take, values, 0).sum(axis=1) / n
    var = np.where(take, (values - mean[:, None]) ** 2, 0).sum(axis=1) / (n - 1)
    return np.abs(mean) / np.sqrt(var / n), n


def _stops(schedule: Schedule, arms: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The seeds each arm (``arms``: arm x draw x seed, its effect added) ran: the first look whose
    Welch p passes the calibrated level at the boundary over the arms still open, else max_seeds."""
    import numpy as np
    from scipy import special

    stop = np.full(arms.shape[:2], schedule.max_seeds)
    open_ = np.ones(arms.shape[:2], dtype=bool)
    (sa, qa), (sb, qb) = _sums(arms), _sums(base)
    for n, alpha in zip(schedule.looks, schedule.alphas):
        va = (qa[..., n - 1] - sa[..., n - 1] ** 2 / n) / (n - 1) / n
        vb = (qb[:, n - 1] - sb[:, n - 1] ** 2 / n) / (n - 1) / n
        se = np.sqrt(va + vb)
        df = (va + vb) ** 2 / ((va**2 + vb**2) / (n - 1))
        p = 2 * special.stdtr(df, -np.abs(sa[..., n - 1] - sb[:, n - 1]) / n / se)
        bar = np.array([calibrated.level(n, n, alpha / k) for k in range(1, arms.shape[0] + 1)])
        crossed = _holm(np.where(open_, p, np.inf), open_.sum(axis=0), bar)
        stop[crossed] = n
        open_ &= ~crossed
    return stop


def _holm(p: np.ndarray, count: np.ndarray, bar: np.ndarray) -> np.ndarray:
    """Holm's step-down per draw, as each look's test runs it (sequential.look): ``p`` (arm x draw,
    inf where an arm is closed), ``count`` the arms open, ``bar[k - 1]`` Welch's p that passes the
    calibrated level at alpha / k. The r-th smallest p (r = 0, 1, ...) is held to alpha / (count - r)
    while every smaller one passed; the arms it rejects."""
    import numpy as np

    order = np.argsort(p, axis=0)
    ranked = np.take_along_axis(p, order, axis=0)
    r = np.arange(p.shape[0])[:, None]
    live = r < count[None, :]
    passed = live & (ranked < bar[np.maximum(count[None, :] - r, 1) - 1])
    passed = np.cumprod(passed, axis=0).astype(bool)  # step-down: stops at the first that does not
    out = np.zeros_like(passed)
    np.put_along_axis(out, order, passed, axis=0)
    return out


def _sums(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running sums of the values and of their squares along the seeds (the last axis)."""
    import numpy as np

    return np.cumsum(values, axis=-1), np.cumsum(values * values, axis=-1)
