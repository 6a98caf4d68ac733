"""What the difference intervals are worth together.

Each difference interval is drawn at the level Holm tested its comparison at (1 - alpha / (m - r),
the `level` column), so interval and verdict agree. Those levels are not simultaneous: each interval
alone misses its true difference at its own step's rate, and where every arm is far from the
baseline all are rejected and the misses add up (alpha / m + alpha / (m - 1) + ... + alpha, less the
overlap the shared baseline gives): with 10 arms of 8 seeds, every comparison rejected, all ten
covered together in 92.0% of sweeps, 5 arms 92.8% (benchmarks/RESULTS.md §29). What holds for all of
them at once is the union bound over their levels, at least 1 - sum(1 - level_i), said in a
sentence wherever two or more intervals are printed (t intervals only: the bootstrap's do not reach
their level alone, said elsewhere).
"""

from __future__ import annotations

import math

from sweepgen.run.report.stats import verdicts as stats


def sentence(statistics: stats.Statistics) -> list[str]:
    """The joint coverage the printed difference intervals promise (none: fewer than two, or
    bootstrap intervals)."""
    if statistics.methods.interval != "t":
        return []
    levels = [c.level for c in statistics.comparisons if c.level is not None and c.low is not None]
    if len(levels) < 2:
        return []
    together = 1 - math.fsum(1 - level for level in levels)
    held = _held(len(levels), together)
    return [
        f"the {len(levels)} difference intervals are each at its own comparison's level (the level column: "
        f"{statistics.levels_from}), not simultaneous: {held}; each alone covers at its level"
    ]


def _held(n: int, together: float) -> str:
    """What ``n`` intervals promise together by the union bound (``together``: one less the sum of
    their misses), which promises nothing once the misses add up past 100%."""
    every = "both" if n == 2 else f"all {n}"
    if together > 0:
        return (
            f"{every} cover their true differences together with at least {together:.1%} (the union bound "
            "over their levels)"
        )
    return f"nothing is promised for {every} together (their misses may add up past 100%)"


def family(statistics: stats.Statistics, metric: str) -> list[str]:
    """Whose error rate Holm's alpha is: this report's comparisons of one metric (``metric``, the value
    as compared) with the baseline, no more. Runs log many metrics, and each `report --metric` over the
    same runs is a family of its own at alpha: two or three metrics whose run noise is correlated 0.5,
    every arm alike the baseline, gave a wrong verdict in some report in up to 7.4% (two) and 8.5%
    (three metrics) of sweeps at 2-5 seeds, and at most 2.9% with each read at alpha / M
    (benchmarks/bench_stats_round14.py --part metrics); a metric chosen after seeing which one
    separates the arms keeps no rate at all. Said beside every table with a comparison, since nothing
    in one report shows how many others were read (none: no baseline)."""
    if not statistics.comparisons:
        return []
    alpha = statistics.methods.alpha
    n = len(statistics.comparisons)
    return [
        f"these verdicts are one test family: alpha {alpha:g} (Holm) holds over the {n} comparison"
        f"{'' if n == 1 else 's'} of {metric} with {statistics.baseline}, not over metrics; a report of "
        f"another metric over these runs is a family of its own at {alpha:g}, so with M metrics read, a "
        f"wrong verdict in any is up to M x {alpha:g} likely: name the metric before the runs, or "
        f"take a verdict only where its p (Holm) is below {alpha:g} / M"
    ]
