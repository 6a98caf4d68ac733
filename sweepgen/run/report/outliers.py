"""A seed group with one run far from its others (a seed that collapsed to 0, or diverged): said
beside the statistics, which keep the run. Its value is part of the configuration's outcome, so it
stays in the mean; but the t and Welch intervals assume seeds that vary about normally, and with such
a run they do not cover what they say (wider where it is present; where a collapse happens in some
seeds, most sets of few seeds hold none and the interval is too narrow: docs/RUN.md).

The rule is Grubbs's test (Grubbs 1950; NIST/SEMATECH e-Handbook 1.3.5.17), two-sided at 5%: the
run farthest from the group's mean, in the group's standard deviations, against the critical value
((n - 1) / sqrt(n)) sqrt(t^2 / (n - 2 + t^2)), t = t.isf(alpha / (2 n), n - 2). On normal runs it
names a run in 5% of groups. One seed at 0 among others at 0.5 +- 0.05 is named in 17% of groups of
3, 61% of 4, 93% of 5, all from 6 (3,000 draws each; the statistic cannot exceed (n - 1) / sqrt(n),
which the critical value nears at few seeds: at 1% these were 4%, 17%, 48%, 80%).

Where the other runs all gave one value (accuracy over a few items: four seeds at 1.0, one at 0.95)
the statistic is at its largest whatever the gap, so the test cannot weigh it: no run is named. On
binomial accuracies (20 items, 0.97) that case named a run in 67% of groups of 3 seeds, 40% of 4, 24%
of 5 (benchmarks/RESULTS.md §28); a collapse among tied runs (four at 0.5, one at 0) goes unnamed too,
the price of a test that assumes values that vary.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ALPHA = 0.05


@dataclass(frozen=True)
class Outlier:
    group: str
    run: str
    value: float
    others: tuple[float, float]  # the lowest and highest value of the group's other runs


def critical(n: int, alpha: float = ALPHA) -> float:
    """Grubbs's two-sided critical value for ``n`` runs (n >= 3)."""
    from scipy import stats

    t = float(stats.t.isf(alpha / (2 * n), n - 2))
    return (n - 1) / math.sqrt(n) * math.sqrt(t * t / (n - 2 + t * t))


def find(group: str, runs: Sequence[tuple[str, float]]) -> Outlier | None:
    """The run of ``runs`` (name, value) Grubbs's test calls an outlier, if any."""
    values = [v for _, v in runs]
    if len(values) < 3 or not all(math.isfinite(v) for v in values):
        return None
    mean, sd = _mean_sd(values)
    name, far = max(runs, key=lambda r: abs(r[1] - mean))
    rest = [v for n, v in runs if n != name]
    # the others all equal: the statistic is (n - 1) / sqrt(n), its largest, for a gap of 0.01 as
    # for one of 100, above the critical value from 3 seeds on; the test cannot weigh the gap
    if sd == 0 or len(set(rest)) < 2 or abs(far - mean) / sd <= critical(len(values)):
        return None
    return Outlier(group, name, far, (min(rest), max(rest)))


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    mean = math.fsum(values) / len(values)
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


def scan(groups: Mapping[str, Sequence[tuple[str, float]]]) -> list[Outlier]:
    """Each group's outlier, in the groups' order."""
    return [o for name, runs in groups.items() if (o := find(name, runs)) is not None]


def sentence(o: Outlier, fmt: str = ".3g") -> str:
    where = "below" if o.value < o.others[0] else "above"
    return (
        f"{o.group}: run {o.run} ({o.value:{fmt}}) lies far {where} its other runs "
        f"({o.others[0]:{fmt}} to {o.others[1]:{fmt}}; Grubbs's test at 5%): a collapsed or diverged "
        "seed? It stays in the mean and the intervals, which assume seeds that vary about normally, so "
        "their level may not be what they cover; look at that run, and run more seeds to know how "
        "often it happens"
    )
