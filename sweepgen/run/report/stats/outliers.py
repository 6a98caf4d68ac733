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

A proportion (a metric bounds.of_metric calls one: an accuracy, a pass rate) is tested on Anscombe's
variance-stabilising scale, asin(sqrt((k + 3/8) / (m + 3/4))) for k successes out of m items, on
which binomial counts vary about normally; m is the fewest items every value of the metric is a count
out of (``items``). On the raw scale accuracies near 1 are skewed, and at 8 seeds Grubbs's test named
a run in 11-13% of groups where none collapsed (20 items at 0.97, 100 at 0.99); on Anscombe's scale
1.3-5.9% (benchmarks/RESULTS.md §29), while a seed at 0 among the others is named as often or more.
A proportion whose values are no counts out of at most ``LATTICE`` items (a mean reward in [0, 1])
is tested as it is. Values logged rounded to d decimals read as counts out of up to 10^d items: for
such m the scale is close to arcsine-square-root, near linear away from 0 and 1. A count logged
through float32 (a torch tensor's ``.item()`` of 19/20 is 0.949999988079071) is read as the count
whose float32 rounding it is exactly: before, such values were tested as they are, and at 8 seeds
near 1 that named a run where none collapsed as often as round five did (13% of groups). The
sentence gives the values as logged and names the scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

ALPHA = 0.05
LATTICE = 10_000  # the most items a proportion's values are looked for as counts out of
# how near k / m a logged value must be: float64's rounding of k / m. Looser would take any value
# for a count (the nearest fraction with a denominator up to 10,000 lies within 1e-8 of every
# number); a value logged through float32 must be exactly float32's rounding of k / m (``items``)
ON_LATTICE = 1e-12


@dataclass(frozen=True)
class Outlier:
    group: str
    run: str
    value: float
    others: tuple[float, float]  # the lowest and highest value of the group's other runs
    scale: str = ""  # the scale tested on where not the values' own (", on Anscombe's scale ...")


def critical(n: int, alpha: float = ALPHA) -> float:
    """Grubbs's two-sided critical value for ``n`` runs (n >= 3)."""
    from scipy import stats

    t = float(stats.t.isf(alpha / (2 * n), n - 2))
    return (n - 1) / math.sqrt(n) * math.sqrt(t * t / (n - 2 + t * t))


def items(values: Sequence[float]) -> int | None:
    """The fewest items m (up to LATTICE) of which every value (in [0, 1]) is a count: k / m as
    float64 rounds it, or exactly as float32 does (a metric logged through a float32 tensor); None
    where there is none (values that are no such counts). Every m is tried and the smallest that
    fits every value taken (the lcm of their denominators, for counts): a float32 value lies up to
    6e-8 from its count, where fractions of other denominators up to 10,000 may lie nearer. Exact
    float32 roundings only: three uniform values through float32 passed for counts in 0 of 2,000
    draws (one alone in 70%, which decides nothing: Grubbs's test needs three runs)."""
    if not all(math.isfinite(v) and 0 <= v <= 1 for v in values):
        return None
    import numpy as np

    m = np.arange(1, LATTICE + 1, dtype=np.float64)
    open_ = np.ones(LATTICE, dtype=bool)  # the m still possible
    for v in sorted(set(values)):
        share = np.rint(v * m) / m
        open_ &= (np.abs(share - v) <= ON_LATTICE) | (share.astype(np.float32).astype(np.float64) == v)
        if not open_.any():
            return None
    return int(np.argmax(open_)) + 1


def anscombe(m: int) -> Callable[[float], float]:
    """Anscombe's variance-stabilising transform of a proportion of ``m`` items."""
    return lambda v: math.asin(math.sqrt((v * m + 3 / 8) / (m + 3 / 4)))


def find(
    group: str, runs: Sequence[tuple[str, float]], scale: Callable[[float], float] = float
) -> Outlier | None:
    """The run of ``runs`` (name, value) Grubbs's test calls an outlier, if any; tested on
    ``scale`` of the values (``anscombe`` for a proportion), named with the values themselves."""
    if not _testable([v for _, v in runs]):
        return None
    on = {n: scale(v) for n, v in runs}
    mean, sd = _mean_sd(list(on.values()))
    name = max(on, key=lambda n: abs(on[n] - mean))
    rest = [v for n, v in runs if n != name]
    if not _far(abs(on[name] - mean), sd, rest):
        return None
    return Outlier(group, name, dict(runs)[name], (min(rest), max(rest)))


def _testable(values: Sequence[float]) -> bool:
    """Grubbs's test needs three runs or more (of two, neither is the odd one out) and finite
    values (a diverged run's infinity is no distance)."""
    return len(values) >= 3 and all(math.isfinite(v) for v in values)


def _far(gap: float, sd: float, rest: Sequence[float]) -> bool:
    """Whether a run ``gap`` from the mean of its group (standard deviation ``sd``, its other runs
    ``rest``) passes Grubbs's critical value. Not where the others all gave one value: the statistic
    is then (n - 1) / sqrt(n), its largest, for a gap of 0.01 as for one of 100, above the critical
    value from 3 seeds on; the test cannot weigh the gap."""
    return sd > 0 and len(set(rest)) >= 2 and gap / sd > critical(len(rest) + 1)


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    mean = math.fsum(values) / len(values)
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


def scan(
    groups: Mapping[str, Sequence[tuple[str, float]]], bounds: tuple[float, float] | None = None
) -> list[Outlier]:
    """Each group's outlier, in the groups' order; a proportion (``bounds`` (0, 1)) whose values
    are counts out of m items on Anscombe's scale."""
    m = _proportion_items(groups, bounds)
    scale, on = (
        (float, "") if m is None else (anscombe(m), f", on Anscombe's scale for a proportion of {m} items")
    )
    found = (find(name, runs, scale) for name, runs in groups.items())
    return [replace(o, scale=on) for o in found if o is not None]


def _proportion_items(
    groups: Mapping[str, Sequence[tuple[str, float]]], bounds: tuple[float, float] | None
) -> int | None:
    """The m of a proportion's counts out of m items (see ``items``); None for any other metric,
    whose values are tested as they are."""
    if bounds != (0.0, 1.0):
        return None
    return items([v for runs in groups.values() for _, v in runs])


def sentence(o: Outlier, fmt: str = ".3g") -> str:
    where = "below" if o.value < o.others[0] else "above"
    return (
        f"{o.group}: run {o.run} ({o.value:{fmt}}) lies far {where} its other runs "
        f"({o.others[0]:{fmt}} to {o.others[1]:{fmt}}; Grubbs's test at 5%{o.scale}): a collapsed or "
        "diverged seed? It stays in the mean and the intervals, which assume seeds that vary about "
        "normally, so their level may not be what they cover; look at that run, and run more seeds to "
        "know how often it happens"
    )
