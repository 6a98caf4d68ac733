"""The percentile bootstrap, kept by name (``--interval bootstrap``) and labelled with the coverage it
really has at small n.

Written here, not taken from ``scipy.stats.bootstrap``: the interval must be the same on every machine
and every scipy release, and scipy's resampling order and default method have changed between
releases. The algorithm: ``B`` resamples of each group drawn as ``rng.integers(0, n, (B, n))`` from
``numpy.random.Generator(PCG64(seed))`` (numpy keeps that stream stable), the statistic per resample,
and the tail percentiles (numpy's default linear interpolation). A difference resamples the arm first,
then the baseline, from one generator.

Its nominal 95% is not what it covers with few seeds: with 2 values the interval is their min..max,
and at 3-5 seeds a 95% interval covers 76-85% of true means and 80-88% of true differences on normal
runs (``COVERAGE``, ``DIFF_COVERAGE``: benchmarks/RESULTS.md). So it is given only from ``MIN_RUNS``
runs in every group compared, where it covers within two points of its 95%; below, no interval, said
why with ``--interval t`` (which holds 95% there) named. Where given, the report prints the coverage
measured beside every interval of a mean, and ``DIFF_COVERAGE``'s (a difference's) in a sentence
beside the table and on the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

RESAMPLES = 10_000
# the fewest runs a group needs for a bootstrap interval: the smallest n measured where a 95% interval
# of a mean and of a difference (n + n) covers at least 93% on normal runs (``COVERAGE``,
# ``DIFF_COVERAGE``). Below it covers what no 95% may claim: 2 runs' interval is their range (~52% of
# true means); at 3-5 runs 76-85% of means and 80-88% of differences (benchmarks/RESULTS.md, rounds
# sixteen and seventeen); 89-92% at 10. The t and Welch intervals hold 95% at every n >= 2
MIN_RUNS = 20
TOO_FEW = (
    f"- (no bootstrap below {MIN_RUNS} runs: its 95% covers 52-89% at 2-10 runs; --interval t holds 95%)"
)
SEED = 0  # fixed, so a report is the same numbers on every machine
# n -> share of 95% percentile-bootstrap intervals of a mean that covered the truth
# (benchmarks/bench_stats.py, 2,000 replications per n; RESULTS.md)
COVERAGE = {2: 0.52, 3: 0.76, 4: 0.80, 5: 0.85, 10: 0.89, 20: 0.93}
# n -> share of 95% percentile-bootstrap intervals of a difference, n + n seeds, that covered the true
# difference (normal runs, 2,000 replications per n; benchmarks/RESULTS.md, "Calibration on RL-shaped
# metrics"; 20: 0.93 of 1,000, round seventeen): the difference's interval is no better labelled than
# the mean's
DIFF_COVERAGE = {2: 0.67, 3: 0.80, 4: 0.86, 5: 0.88, 8: 0.90, 10: 0.92, 20: 0.93}


def coverage(n: int) -> float | None:
    """The measured coverage of the 95% bootstrap interval at ``n`` (the nearest measured n below)."""
    known = _measured_below(COVERAGE, n)
    return None if known is None else COVERAGE[known]


def diff_coverage(n_arm: int, n_base: int) -> float | None:
    """The measured coverage of a 95% bootstrap difference interval with these seeds (at the smaller
    group's n, the nearest measured below: an unequal split covers no more than its smaller side)."""
    known = _measured_below(DIFF_COVERAGE, min(n_arm, n_base))
    return None if known is None else DIFF_COVERAGE[known]


def _measured_below(table: dict[int, float], n: int) -> int | None:
    known = [k for k in table if k <= n]
    return max(known) if known else None


def diff_sentence(sizes: list[tuple[int, int]]) -> str | None:
    """What the report says beside bootstrap difference intervals: their level column is not their
    coverage at these seed counts (``sizes``: each comparison's (arm, baseline) runs)."""
    smallest = min((min(a, b) for a, b in sizes), default=0)
    at = _measured_below(DIFF_COVERAGE, smallest)
    if at is None:
        return None
    return (
        "the percentile bootstrap's intervals cover less than their level with few seeds: measured on "
        f"normal runs at {at} + {at} seeds (the nearest to this report's smallest group, {smallest}), a "
        f"95% difference interval covers about {DIFF_COVERAGE[at]:.0%} of true differences and a 95% "
        f"mean interval about {COVERAGE[_measured_below(COVERAGE, at) or 2]:.0%} of true means; the "
        "default t and Welch intervals (--interval t) cover 95%"
    )


def withheld(arm: Sequence[float], base: Sequence[float]) -> bool:
    """No bootstrap interval of this difference: a group of fewer than ``MIN_RUNS`` runs (its 95%
    covers 67-92% of true differences at 2-10 seeds a side), or one whose runs all gave one value (its
    resamples are that value alone, so the interval holds the other group's spread only: 0.7, 0.7, 0.7
    against 0.72, 0.72, 0.74 gave [0.02, 0.04] beside the test's "no evidence"; such intervals covered
    36-65% of true differences at 2-5 seeds)."""
    return any(len(g) < MIN_RUNS or len(set(g)) == 1 for g in (arm, base))


def withheld_sentence(names: Sequence[str]) -> str | None:
    """What the report says of the comparisons ``withheld`` left without an interval (None: none)."""
    if not names:
        return None
    return (
        f"no bootstrap difference interval for {', '.join(names)}: with fewer than {MIN_RUNS} runs in a "
        "group a percentile bootstrap's 95% interval covers less than 95% of true differences (measured "
        "on normal runs: about 67% at 2 + 2 seeds, 80% at 3 + 3, 86% at 4 + 4, 88% at 5 + 5, 92% at "
        "10 + 10), and a group whose runs all gave one value has no spread to resample (36-65% covered; "
        "benchmarks/RESULTS.md, rounds sixteen and seventeen); the verdict is the test's; --interval t "
        "(the default) gives an interval there that holds its level"
    )


def label(n: int) -> str:
    if n < MIN_RUNS:  # no interval (mean_interval)
        return TOO_FEW
    cov = coverage(n)
    return "bootstrap" if cov is None else f"bootstrap (covers ~{cov:.0%} at n={n})"


def mean_interval(
    np: ModuleType, values: Sequence[float], level: float, *, seed: int = SEED, resamples: int = RESAMPLES
) -> tuple[float | None, float | None]:
    """The percentile bootstrap interval of the mean, or (None, None) below ``MIN_RUNS`` values (where
    its 95% covers 52-89% of true means)."""
    if len(values) < MIN_RUNS:
        return None, None
    rng = np.random.Generator(np.random.PCG64(seed))
    data = np.asarray(values, dtype=float)
    means = data[rng.integers(0, len(data), (resamples, len(data)))].mean(axis=1)
    return _percentiles(np, means, level)


def diff_interval(
    np: ModuleType,
    arm: Sequence[float],
    base: Sequence[float],
    level: float,
    *,
    seed: int = SEED,
    resamples: int = RESAMPLES,
) -> tuple[float | None, float | None]:
    """The percentile bootstrap interval of mean(arm) - mean(base), each group resampled on its own;
    (None, None) where ``withheld``."""
    if withheld(arm, base):
        return None, None
    rng = np.random.Generator(np.random.PCG64(seed))
    a = np.asarray(arm, dtype=float)
    b = np.asarray(base, dtype=float)
    a_means = a[rng.integers(0, len(a), (resamples, len(a)))].mean(axis=1)
    b_means = b[rng.integers(0, len(b), (resamples, len(b)))].mean(axis=1)
    return _percentiles(np, a_means - b_means, level)


def _percentiles(np: ModuleType, draws: Any, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)
