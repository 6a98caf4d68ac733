"""Seed-aware statistics: per group a mean with a bootstrap interval, and against a baseline group the
difference with its interval, a two-sided test, Holm's correction across groups and a verdict word.

Pure: numbers in, numbers out. numpy and scipy are imported when a comparison is made (the `plot`
extra, or the `qmc`/`dev` extras that already bring scipy).

Choices, and why:

- The bootstrap is written here, not taken from ``scipy.stats.bootstrap``: the interval must be the
  same on every machine and every scipy release, and scipy's resampling order and default method
  have changed between releases. The algorithm is the plain percentile bootstrap: ``B`` resamples of
  each group drawn as ``rng.integers(0, n, (B, n))`` from ``numpy.random.Generator(PCG64(seed))``
  (numpy keeps that stream stable), the statistic per resample, and the 2.5th/97.5th percentiles
  (numpy's default linear interpolation). A difference resamples the arm first, then the baseline,
  from one generator.
- The test is Welch's t-test (``scipy.stats.ttest_ind(equal_var=False)``) when both groups have at
  least ``MIN_WELCH`` runs, else an exact permutation test of the difference in means
  (``scipy.stats.permutation_test``, every relabelling enumerated: with fewer than 5 seeds a t-test's
  normal assumption cannot be checked). The table names the test used per row.
- p-values are Holm-corrected across the arms compared with the baseline (step-down, monotone).
- The verdict is ``better`` / ``worse`` when the corrected p is below ``ALPHA`` (direction from
  ``mode``), else ``no evidence``; an arm or a baseline with one run gets ``no evidence`` and no test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from sweepgen.errors import UserError

ALPHA = 0.05
LEVEL = 0.95
RESAMPLES = 10_000
SEED = 0  # the bootstrap's seed: fixed, so a report is the same numbers on every machine
MIN_WELCH = 5  # fewer runs in either group: exact permutation test instead of Welch
STATS_HINT = "install it with `pip install 'sweepgen[plot]'` (or `pip install scipy`)"


@dataclass(frozen=True)
class GroupStats:
    name: str
    n: int
    mean: float
    low: float | None  # bootstrap interval of the mean; None with one run
    high: float | None


@dataclass(frozen=True)
class Comparison:
    """One arm against the baseline (difference = arm - baseline)."""

    name: str
    baseline: str
    diff: float
    low: float | None
    high: float | None
    test: str | None  # "welch" | "permutation" | None (a group with one run)
    p: float | None
    p_holm: float | None
    verdict: str  # better | worse | no evidence


@dataclass(frozen=True)
class Statistics:
    groups: tuple[GroupStats, ...]
    comparisons: tuple[Comparison, ...]  # empty without a baseline
    baseline: str | None
    mode: str
    seed: int = SEED
    resamples: int = RESAMPLES


def _numpy() -> ModuleType:
    try:
        import numpy as np
        import scipy.stats  # noqa: F401  (checked here, used below)
    except ImportError:
        raise UserError(
            "seed-aware statistics need numpy and scipy, which are not installed", hint=STATS_HINT
        ) from None
    return np


def bootstrap_mean(
    values: Sequence[float], *, seed: int = SEED, resamples: int = RESAMPLES
) -> tuple[float | None, float | None]:
    """The percentile bootstrap interval (LEVEL) of the mean, or (None, None) for one value."""
    if len(values) < 2:
        return None, None
    np = _numpy()
    rng = np.random.Generator(np.random.PCG64(seed))
    data = np.asarray(values, dtype=float)
    means = data[rng.integers(0, len(data), (resamples, len(data)))].mean(axis=1)
    return _percentiles(np, means)


def bootstrap_diff(
    arm: Sequence[float], base: Sequence[float], *, seed: int = SEED, resamples: int = RESAMPLES
) -> tuple[float | None, float | None]:
    """The percentile bootstrap interval of mean(arm) - mean(base), each group resampled on its own."""
    if len(arm) < 2 or len(base) < 2:
        return None, None
    np = _numpy()
    rng = np.random.Generator(np.random.PCG64(seed))
    a = np.asarray(arm, dtype=float)
    b = np.asarray(base, dtype=float)
    a_means = a[rng.integers(0, len(a), (resamples, len(a)))].mean(axis=1)
    b_means = b[rng.integers(0, len(b), (resamples, len(b)))].mean(axis=1)
    return _percentiles(np, a_means - b_means)


def _percentiles(np: ModuleType, draws: Any) -> tuple[float, float]:
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def difference_test(arm: Sequence[float], base: Sequence[float]) -> tuple[str | None, float | None]:
    """(test name, two-sided p) for mean(arm) != mean(base); (None, None) with a one-run group."""
    if len(arm) < 2 or len(base) < 2:
        return None, None
    np = _numpy()
    from scipy import stats

    a = np.asarray(arm, dtype=float)
    b = np.asarray(base, dtype=float)
    if min(len(a), len(b)) >= MIN_WELCH:
        p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
        return "welch", p
    result = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent",
        vectorized=True,
        n_resamples=math.inf,  # every relabelling: exact, no random draw
        alternative="two-sided",
    )
    return "permutation", float(result.pvalue)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment; None (no test) stays None and does not count as a hypothesis."""
    tested = sorted((p, i) for i, p in enumerate(pvalues) if p is not None and not math.isnan(p))
    out: list[float | None] = [None if p is None else math.nan for p in pvalues]
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - rank) * p))
        out[i] = running
    return out


def verdict(diff: float, p_holm: float | None, mode: str) -> str:
    if p_holm is None or math.isnan(p_holm) or p_holm >= ALPHA:
        return "no evidence"
    improved = diff > 0 if mode == "max" else diff < 0
    return "better" if improved else "worse"


def compare(groups: Sequence[tuple[str, Sequence[float]]], *, baseline: str | None, mode: str) -> Statistics:
    """Statistics of each (name, values) group, and each against ``baseline`` (a group's name)."""
    summary = []
    for name, values in groups:
        low, high = bootstrap_mean(values)
        summary.append(GroupStats(name, len(values), sum(values) / len(values), low, high))
    if baseline is None:
        return Statistics(tuple(summary), (), None, mode)
    base = dict(groups)[baseline]
    arms = [(name, values) for name, values in groups if name != baseline]
    tests = [difference_test(values, base) for _, values in arms]
    adjusted = holm([p for _, p in tests])
    comparisons = []
    for (name, values), (test, p), p_holm in zip(arms, tests, adjusted):
        diff = sum(values) / len(values) - sum(base) / len(base)
        low, high = bootstrap_diff(values, base)
        comparisons.append(
            Comparison(name, baseline, diff, low, high, test, p, p_holm, verdict(diff, p_holm, mode))
        )
    return Statistics(tuple(summary), tuple(comparisons), baseline, mode)
