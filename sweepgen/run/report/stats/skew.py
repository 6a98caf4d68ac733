"""Seed noise too skewed for the t interval of a mean: found in the runs, said beside the table.

The t interval of a group mean is exact for normal seed noise. On a right-skewed metric (a reward that
is mostly small with rare large values: lognormal, sigma 1) its 95% covered 82-85% of true means at
3-5 seeds (benchmarks/RESULTS.md, rounds sixteen and seventeen); no interval holds 95% there at so few
seeds, and none can be told from the few runs of one group. The runs of every group together can:
each run's deviation from its group's mean (scaled by sqrt(n / (n - 1)), so each has the seed noise's
variance), pooled over the groups with spread, is tested for skewness with D'Agostino's test
(``scipy.stats.skewtest``, from ``MIN_DEVIATIONS`` deviations), two-sided at ``ALPHA``. Where it
rejects, a sentence says the mean intervals may cover less than 95% and what to do; where there are
too few runs to test, nothing is said by the report (docs/RUN.md says it of every t interval).

Measured (benchmarks/bench_stats_round17.py --part skew): on normal runs it speaks in under 1% of
reports; on the lognormal metric in 20% of reports of 2 groups x 5 seeds, 62% of 5 x 5, 88% of 10 x 5
(at 3 seeds: 0%, 4%, 34%). The mean intervals are what undercovers: the Welch intervals of the
difference of two arms of one lognormal metric covered 98-100% at 3-5 seeds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

MIN_DEVIATIONS = 8  # scipy.stats.skewtest's own minimum
ALPHA = 0.01  # two-sided: under 1% of reports of normal runs say it


def deviations(values: Mapping[str, Sequence[float]]) -> list[float]:
    """Each run's deviation from its group's mean, scaled to the seed noise's variance, from the
    groups of two or more runs with spread."""
    out: list[float] = []
    for runs in values.values():
        n = len(runs)
        if n < 2 or min(runs) == max(runs) or not all(math.isfinite(v) for v in runs):
            continue
        mean = math.fsum(runs) / n
        out.extend((v - mean) * math.sqrt(n / (n - 1)) for v in runs)
    return out


def skewed(values: Mapping[str, Sequence[float]]) -> tuple[float, float, int] | None:
    """(sample skewness, skewtest's two-sided p, deviations) where the pooled deviations are skewed
    at ``ALPHA``; None: not skewed, or too few deviations to tell."""
    pooled = deviations(values)
    if len(pooled) < MIN_DEVIATIONS:
        return None
    from scipy import stats

    if min(pooled) == max(pooled):
        return None
    result = stats.skewtest(pooled)
    if not float(result.pvalue) < ALPHA:
        return None
    return float(stats.skew(pooled)), float(result.pvalue), len(pooled)


def sentence(values: Mapping[str, Sequence[float]]) -> list[str]:
    """The sentence beside the table where the runs' seed noise is skewed (none otherwise)."""
    found = skewed(values)
    if found is None:
        return []
    skewness, p, count = found
    side = "right (rare high values)" if skewness > 0 else "left (rare low values)"
    # a log pulls in a right tail; a left one (an accuracy near its cap) it stretches further
    remedy = "Compare a transformed metric (its log) or run more seeds" if skewness > 0 else "Run more seeds"
    return [
        f"the runs' seed noise is skewed to the {side}: the {count} runs' deviations from their "
        f"group means have skewness {skewness:+.2f} (D'Agostino's test, p {p:.2g}); a group mean's 95% "
        "t interval assumes roughly symmetric noise and may cover less (about 83% on a lognormal "
        "metric at 3-5 seeds, benchmarks/RESULTS.md; the difference intervals of two arms of that metric "
        f"held theirs). {remedy}"
    ]
