"""Seed-aware statistics: per group a mean with its interval, and against a baseline group the
difference with its interval, a two-sided test, Holm's correction across groups and a verdict word.

Pure: numbers in, numbers out. scipy (the `plot` extra, or the `qmc`/`dev` extras) computes:

- the interval of a group mean: the t interval, ``scipy.stats.t.ppf`` at n - 1 degrees of freedom
  (the same as ``scipy.stats.ttest_1samp(x).confidence_interval``);
- the test: Welch's t-test at a level calibrated over the variance ratio (sweepgen.run.report.
  calibrated): Welch's statistic and Welch–Satterthwaite df (``scipy.stats.ttest_ind(equal_var=False)``),
  its p taken to the largest probability, over every ratio of the two groups' spreads, that Welch's p
  falls at or below it (exact on normal runs; at or above Welch's own p), at every n >= 2; or by
  name the exact permutation test of the difference in means (``scipy.stats.permutation_test``, every
  relabelling enumerated), whose smallest possible p is 2 / C(n_a + n_b, n_a);
- the interval of a difference: Welch's at the calibrated level of its confidence level: the mean
  difference +- ``t.ppf(1 - a'/2, Welch–Satterthwaite df)`` x its standard error, a' the level at
  which Welch's test errs at most 1 - confidence at every ratio of spreads;
- the percentile bootstrap (``--interval bootstrap``, sweepgen.run.report.stats.bootstrap), given only
  from ``bootstrap.MIN_RUNS`` runs a group (below, its 95% covers 52-92%: no interval, said why) and
  labelled with the coverage it has at that n.

Interval and verdict agree by construction. Holm's step-down procedure tests the r-th smallest p
(r = 0, 1, ...) at alpha / (m - r) while it rejects; each difference interval is drawn at exactly the
level its comparison was tested at: 1 - alpha / (m - r) for a rejected one, 1 - alpha / (m - s) for the
rest (s: how many were rejected, the step where Holm stopped). With the calibrated test, ``better`` /
``worse`` therefore holds exactly when the interval excludes zero (the step-down is carried out on the
intervals themselves, so not even rounding can split them). With the permutation test or the
bootstrap the interval comes from another method and the page says they can disagree.

Runs that all gave one value (accuracy over a few eval items, a reward at its cap) are no estimate of
a group's seed noise: a group with such runs takes the other group's variance in the difference's
standard error (``_spreads``) with that group's n - 1 degrees of freedom, at the stated level (not
calibrated: the statistic is then the two-sample t, exact at equal spreads), and gets no interval of
its own mean; where both groups have none, the test and interval are not computed.

Where no verdict is possible at all (a group with one run; both groups without spread under Welch's
test; a permutation test whose smallest attainable p cannot pass Holm's first step), the verdict is
``cannot decide`` with the reason.
"""

from __future__ import annotations

import math
import statistics as exact
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import ModuleType

from sweepgen.errors import UserError
from sweepgen.run.report.stats import bootstrap, bounds, calibrated, power

ALPHA = 0.05
LEVEL = 0.95
TESTS = ("welch", "permutation")
INTERVALS = ("t", "bootstrap")
UNDECIDABLE = "cannot decide"
NO_SPREAD = "- (all runs equal)"  # a group's interval where every seed gave one value
CALIBRATED_NAME = "Welch's t-test, level calibrated over the variance ratio"
CALIBRATED = "welch-calibrated"  # a comparison's test, as statistics.csv / .json write it
CALIBRATION_REACH = 9  # seeds added to the smaller group when looking for a count that has a calibrated level
STATS_HINT = "install it with `pip install 'sweepgen[plot]'` (or `pip install scipy`)"


@dataclass(frozen=True)
class Methods:
    """Which interval and test a report uses (``--interval``, ``--test``)."""

    interval: str = "t"
    test: str = "welch"
    alpha: float = ALPHA
    bounds: tuple[float, float] | None = None  # the range a group's mean lies in (a proportion's [0, 1])

    def describe(self) -> dict[str, str]:
        mean = "t interval" if self.interval == "t" else "percentile bootstrap"
        diff = "Welch interval at the calibrated level" if self.interval == "t" else "percentile bootstrap"
        # each at its own Holm step's level, not simultaneous (joint.py: 92% together at 10 arms)
        diff += ", each at its Holm step's level"
        if self.bounds is not None:  # said wherever the methods are: title, json, page
            low, high = self.bounds
            mean += f", clipped to [{low:g}, {high:g}] (the metric is a proportion)"
            diff += f", clipped to [{low - high:g}, {high - low:g}]"
        test = CALIBRATED_NAME if self.test == "welch" else "exact permutation test"
        return {
            "mean_interval": f"{LEVEL:.0%} {mean}",
            "diff_interval": diff,
            "test": test,
            "adjustment": "Holm",
            "alpha": f"{self.alpha:g}",
        }


@dataclass(frozen=True)
class GroupStats:
    name: str
    n: int
    mean: float
    sd: float | None  # None with one run
    low: float | None  # the mean's interval; None with one run
    high: float | None
    interval: str  # "t" | "bootstrap (covers ~93% at n=20)" | bootstrap.TOO_FEW | "-" (one run)


@dataclass(frozen=True)
class Comparison:
    """One arm against the baseline (difference = arm - baseline)."""

    name: str
    baseline: str
    diff: float
    low: float | None
    high: float | None
    level: float | None  # the difference interval's confidence level (Holm's step)
    test: str | None  # "welch-calibrated" | "permutation" | None (no test possible)
    p: float | None
    p_holm: float | None
    verdict: str  # better | worse | no evidence | cannot decide
    reason: str | None = None  # why a verdict is not possible
    seeds_needed: int | None = None  # per group, for 80% power at the adjusted alpha (no evidence only)
    detectable: float | None = None  # smallest difference detectable with 80% power at the current n
    # seeds_needed where the true spread is at the top of its 80% interval (``_spread_top``): the
    # seeds printed are a plug-in estimate from the spread of 2-5 seeds, which at 3 + 3 gave the
    # observed difference under 80% power in half of simulated comparisons (benchmarks/RESULTS.md §33)
    seeds_needed_high: int | None = None


@dataclass(frozen=True)
class Statistics:
    groups: tuple[GroupStats, ...]
    comparisons: tuple[Comparison, ...]  # empty without a baseline
    baseline: str | None
    mode: str
    methods: Methods = Methods()
    levels_from: str = "Holm's step"  # what set the level column (sequential_table: the looks too)


def bootstrap_coverage(statistics: Statistics) -> str | None:
    """With ``--interval bootstrap``: the sentence saying how much less than their level its
    difference intervals cover at the seeds compared (None: another interval, or no comparison with
    two runs a side)."""
    if statistics.methods.interval != "bootstrap":
        return None
    n_of = {g.name: g.n for g in statistics.groups}
    sizes = [(n_of[c.name], n_of[c.baseline]) for c in statistics.comparisons if c.low is not None]
    said = [bootstrap.diff_sentence(sizes), bootstrap.withheld_sentence(_withheld(statistics))]
    return "; ".join(filter(None, said)) or None


def _withheld(statistics: Statistics) -> list[str]:
    """The comparisons tested whose bootstrap interval was withheld (bootstrap.withheld: a bootstrap
    interval is otherwise always given)."""
    return [c.name for c in statistics.comparisons if c.low is None and c.test is not None]


def _numpy() -> ModuleType:
    try:
        import numpy as np
        import scipy.stats  # noqa: F401  (checked here, used below)
    except ImportError:
        raise UserError(
            "seed-aware statistics need numpy and scipy, which are not installed", hint=STATS_HINT
        ) from None
    return np


def _var(values: Sequence[float]) -> float:
    """The sample variance; exactly 0 where every value is the same. fsum / n rounds (six runs at
    0.025 have a mean 1 ulp off), which left identical runs a variance of 1e-35: seeds that changed
    nothing were tested as if they had spread, and two such groups 1e-4 apart were called "worse" at
    p 1e-67 where no seed noise was there to test against."""
    if min(values) == max(values):
        return 0.0
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def t_mean(values: Sequence[float], level: float = LEVEL) -> tuple[float | None, float | None]:
    """The t interval of the mean at ``level`` (n - 1 degrees of freedom); (None, None) for one value."""
    if len(values) < 2:
        return None, None
    from scipy import stats

    _numpy()
    n = len(values)
    mean = math.fsum(values) / n
    half = float(stats.t.ppf(1 - (1 - level) / 2, n - 1)) * math.sqrt(_var(values) / n)
    return mean - half, mean + half


# Two seeds against more: Welch–Satterthwaite's df leans on a variance with one degree of freedom,
# and scipy's Welch test calls a null difference at 6.3% (2 + 5, equal spread) to 11.5% (2 + 8, the
# pair 2x noisier) on normal runs (benchmarks/RESULTS.md §20); `report` and the looks of
# `run --until-decided` both test at the calibrated level, which holds the stated rate there by
# construction (RESULTS.md §22).


def welch(arm: Sequence[float], base: Sequence[float]) -> tuple[float, float, float]:
    """(difference, its standard error, degrees of freedom); both n >= 2. Welch–Satterthwaite, except
    where one group's runs are all equal (``_spreads``); a standard error of 0: neither has spread."""
    va, vb = _spreads(arm, base)
    na, nb = len(arm), len(base)
    diff = math.fsum(arm) / na - math.fsum(base) / nb
    ea, eb = va / na, vb / nb
    se = math.sqrt(ea + eb)
    if se == 0:
        return diff, 0.0, float(na + nb - 2)
    return diff, se, _degrees_of_freedom(arm, base, ea, eb)


def _degrees_of_freedom(arm: Sequence[float], base: Sequence[float], ea: float, eb: float) -> float:
    """Welch–Satterthwaite's, from each group's squared standard error ``ea``, ``eb`` (not both 0)."""
    na, nb = len(arm), len(base)
    if _var(arm) == 0 or _var(base) == 0:  # one group's spread stands for both: its n - 1 df are all
        return float((nb if _var(arm) == 0 else na) - 1)
    # in the arm's share of the squared error: (ea + eb)^2 / (ea^2 / .. + eb^2 / ..) underflows to 0 / 0
    # for runs whose spread is tiny (1e-100: squared errors of 1e-200, their squares 0)
    w = ea / (ea + eb)
    return 1 / (w * w / (na - 1) + (1 - w) * (1 - w) / (nb - 1))


def _spreads(arm: Sequence[float], base: Sequence[float]) -> tuple[float, float]:
    """Each group's variance for the standard error of the difference. A group whose runs all
    gave the same value has no estimate of its own spread: Welch's formula would take it as 0, its
    mean known exactly, which for a metric with few distinct values (accuracy over a few eval items,
    a reward at its cap) is sampling luck; under the null the test holds (both arms alike) the other
    group's variance is the estimate there is, so it is taken for both (the two-sample t with the
    variance from that group alone: exact for normal runs of equal spread, conservative where the
    group really has none). Measured: 22% false verdicts in that case with 2 + 5 seeds, 5% with this
    rule (docs/RUN.md, benchmarks/RESULTS.md)."""
    va, vb = _var(arm), _var(base)
    if va == 0:
        va = vb
    elif vb == 0:
        vb = va
    return va, vb


def no_spread(arm: Sequence[float], base: Sequence[float]) -> bool:
    """Both groups' runs all gave one value each: no estimate of seed noise, so no test or interval."""
    return len(arm) >= 2 and len(base) >= 2 and _var(arm) == 0 and _var(base) == 0


def welch_interval(arm: Sequence[float], base: Sequence[float], level: float) -> tuple[float, float]:
    """Welch's interval of mean(arm) - mean(base) at ``level`` (for groups with spread), at Welch's
    own level: the interval `report` draws is ``calibrated_interval``."""
    from scipy import stats

    diff, se, df = welch(arm, base)
    half = float(stats.t.ppf(1 - (1 - level) / 2, df)) * se
    return diff - half, diff + half


def calibrated_level(arm: Sequence[float], base: Sequence[float], alpha: float) -> float:
    """The level Welch's quantile is taken at for a test or interval at ``alpha``: the calibrated
    one, or ``alpha`` itself where a group's runs are all equal (the two-sample t on the other's
    variance, exact at equal spreads; no ratio of spreads to calibrate over)."""
    if _var(arm) == 0 or _var(base) == 0:
        return alpha
    return calibrated.level(len(arm), len(base), alpha)


def calibrated_interval(arm: Sequence[float], base: Sequence[float], level: float) -> tuple[float, float]:
    """The interval of mean(arm) - mean(base) at confidence ``level`` that the calibrated test
    inverts: it excludes zero exactly when that test rejects at 1 - ``level`` (groups with spread)."""
    from scipy import stats

    diff, se, df = welch(arm, base)
    tested_at = calibrated_level(arm, base, 1 - level)
    if tested_at <= 0:  # no level holds the rate at these seeds: nothing is excluded
        return -math.inf, math.inf
    half = float(stats.t.isf(tested_at / 2, df)) * se
    return diff - half, diff + half


def difference_test(
    arm: Sequence[float], base: Sequence[float], test: str = "welch", exact_below: float = 1.0
) -> tuple[str | None, float | None]:
    """(test name, two-sided p) for mean(arm) != mean(base); (None, None) with a one-run group. The
    test ``welch`` is Welch's at the calibrated level (``CALIBRATED``). ``exact_below``: the
    calibrated p (about 10 ms each) only where Welch's own p is below it; at or above, Welch's p
    stands in, a lower bound of it (the calibrated p is at least Welch's), so no test at a level at
    or below ``exact_below`` rejects with either: for verdicts that are not printed with their p."""
    if len(arm) < 2 or len(base) < 2 or (test == "welch" and no_spread(arm, base)):
        return None, None
    np = _numpy()
    from scipy import stats

    a = np.asarray(arm, dtype=float)
    b = np.asarray(base, dtype=float)
    if test == "welch":
        diff, se, df = welch(arm, base)
        # with spread in both groups, the p of scipy.stats.ttest_ind(equal_var=False) (a test holds
        # them equal), from the same difference, standard error and degrees of freedom as the
        # interval; computed here because a group whose runs are all equal takes the other's spread
        # (``_spreads``), where scipy's would take 0 (and warn about precision)
        p = float(2 * stats.t.sf(abs(diff / se), df))
        if _var(arm) == 0 or _var(base) == 0 or p >= exact_below:
            return CALIBRATED, p
        return CALIBRATED, calibrated.p_value(p, len(arm), len(base))
    result = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent",
        vectorized=True,
        n_resamples=math.inf,  # every relabelling: exact, no random draw
        alternative="two-sided",
    )
    return "permutation", float(result.pvalue)


def _difference_tests(
    arms: Sequence[tuple[str, Sequence[float]]], base: Sequence[float], test: str, exact_below: float
) -> list[tuple[str | None, float | None]]:
    """``difference_test`` of each arm against ``base``; below ``exact_below`` (verdicts only) the
    calibrated p's of the arms that share their seed counts in one pass (calibrated.p_values: the
    same numbers, a best-mean test over 50 groups in a fraction of the time)."""
    if test != "welch" or exact_below >= 1.0:
        return [difference_test(values, base, test, exact_below) for _, values in arms]
    out = [difference_test(values, base, test, 0.0) for _, values in arms]  # Welch's own p each
    for (n_arm, n_base), which in _to_calibrate(arms, base, out, exact_below).items():
        calibrated_p = calibrated.p_values(_numpy().array([out[i][1] for i in which]), n_arm, n_base)
        for i, p in zip(which, calibrated_p):
            out[i] = (CALIBRATED, float(p))
    return out


def _to_calibrate(
    arms: Sequence[tuple[str, Sequence[float]]],
    base: Sequence[float],
    welch: list[tuple[str | None, float | None]],
    exact_below: float,
) -> dict[tuple[int, int], list[int]]:
    """The arms whose Welch p is below ``exact_below`` (both groups with spread), by seed counts."""
    batches: dict[tuple[int, int], list[int]] = {}
    for i, ((_, values), (_, p)) in enumerate(zip(arms, welch)):
        if p is not None and p < exact_below and _var(values) != 0 and _var(base) != 0:
            batches.setdefault((len(values), len(base)), []).append(i)
    return batches


def smallest_p(test: str, n_arm: int, n_base: int) -> float:
    """The smallest two-sided p the test can give at these group sizes (0 for Welch)."""
    if test == "welch":
        return 0.0
    return min(1.0, 2 / math.comb(n_arm + n_base, n_arm))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment; None (no test) stays None and does not count as a hypothesis."""
    tested = sorted((p, i) for i, p in enumerate(pvalues) if p is not None and not math.isnan(p))
    out: list[float | None] = [None if p is None else math.nan for p in pvalues]
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (len(tested) - rank) * p))
        out[i] = running
    return out


def holm_levels(
    pvalues: Sequence[float], alpha: float, rejects: Callable[[int, float], bool] | None = None
) -> tuple[list[float], list[bool]]:
    """Per p: the alpha Holm tests it at, and whether Holm rejects it. Step-down in the order of the
    p-values: the r-th is tested at alpha / (m - r) while every earlier one was rejected; at the first
    that is not, Holm stops and every later one is tested at that step's alpha. ``rejects(i, a)``
    decides one step (default: p_i < a; Welch's decides on its interval, so both say the same)."""
    m = len(pvalues)
    decide = rejects or (lambda i, a: pvalues[i] < a)
    levels = [alpha] * m
    rejected = [False] * m
    stopped = None
    for rank, i in enumerate(sorted(range(m), key=lambda i: pvalues[i])):
        step = alpha / (m - rank) if stopped is None else stopped
        levels[i] = step
        if stopped is None and decide(i, step):
            rejected[i] = True
        elif stopped is None:
            stopped = step
    return levels, rejected


def verdict(diff: float, p_holm: float | None, mode: str, alpha: float = ALPHA) -> str:
    if p_holm is None or math.isnan(p_holm) or p_holm >= alpha:
        return "no evidence"
    improved = diff > 0 if mode == "max" else diff < 0
    return "better" if improved else "worse"


def group_stats(name: str, values: Sequence[float], methods: Methods) -> GroupStats:
    n = len(values)
    # the exact mean, rounded once: fsum / n rounds twice, so three seeds at 0.95 averaged
    # 0.9500000000000001 and five 0.95, and the page called the first the best, no tie
    mean = float(exact.mean(values))
    if n < 2:
        return GroupStats(name, n, mean, None, None, None, "-")
    if _var(values) == 0:  # every seed gave the same value: no spread to build an interval from
        return GroupStats(name, n, mean, 0.0, None, None, NO_SPREAD)
    if methods.interval == "bootstrap":
        low, high = bootstrap.mean_interval(_numpy(), values, LEVEL)
        kind = bootstrap.label(n)
    else:
        low, high = t_mean(values)
        kind = "t"
    kept = bounds.clip(low, high, methods.bounds)
    kind += bounds.said(kept != (low, high), methods.bounds)  # statistics.csv's row says it alone
    return GroupStats(name, n, mean, math.sqrt(_var(values)), *kept, kind)


def compare(
    groups: Sequence[tuple[str, Sequence[float]]],
    *,
    baseline: str | None,
    mode: str,
    methods: Methods | None = None,
    seeds_needed: bool = True,
    verdicts_only: bool = False,
) -> Statistics:
    """Statistics of each (name, values) group, and each against ``baseline`` (a group's name).
    ``seeds_needed``: also the power analysis of each comparison without evidence (False: the
    verdicts alone, for simulations). ``verdicts_only``: the same verdicts, but a p at or above
    alpha (never rejected at any Holm step) is Welch's own, a lower bound of the calibrated one, and
    the p-values, Holm's p and the levels of those that are not rejected are not the report's: for
    a test whose verdicts alone are read (winner.py's best group: the calibrated p of every group
    was most of its cost)."""
    methods = methods or Methods()
    if methods.test not in TESTS or methods.interval not in INTERVALS:
        raise UserError(
            f"unknown method: --test {methods.test} --interval {methods.interval}",
            hint=f"--test {'|'.join(TESTS)}, --interval {'|'.join(INTERVALS)}",
        )
    summary = tuple(group_stats(name, values, methods) for name, values in groups)
    if baseline is None:
        return Statistics(summary, (), None, mode, methods)
    base = dict(groups)[baseline]
    arms = [(name, list(values)) for name, values in groups if name != baseline]
    exact_below = methods.alpha if verdicts_only and methods.test == "welch" else 1.0
    compared = _comparisons(arms, base, baseline, mode, methods, (seeds_needed, exact_below))
    return Statistics(summary, compared, baseline, mode, methods)


def _comparisons(
    arms: Sequence[tuple[str, Sequence[float]]],
    base: Sequence[float],
    baseline: str,
    mode: str,
    methods: Methods,
    how: tuple[bool, float],
) -> tuple[Comparison, ...]:
    """Each arm against the baseline; ``how``: (the power analysis too, ``difference_test``'s
    ``exact_below``). Welch's p at or above ``exact_below`` (at least alpha) sorts after every p
    Holm can reject, as the calibrated p would, so the same comparisons are rejected; the steps are
    then decided on the p-values and no interval is drawn (each Holm step's level is a calibration
    of its own, 0.1 s: 3.5 s of a 50-group best test)."""
    needed, exact_below = how
    verdicts_only = exact_below < 1.0
    tests = _difference_tests(arms, base, methods.test, exact_below)
    tested = [i for i, (_, p) in enumerate(tests) if p is not None]
    pvalues = [p for _, p in tests if p is not None]
    adjusted = holm([p for _, p in tests])
    values_of = [list(arms[i][1]) for i in tested]

    def interval(k: int, alpha: float) -> tuple[float | None, float | None]:
        return (None, None) if verdicts_only else _diff_interval(methods, values_of[k], base, alpha)

    rejects = None if verdicts_only else _interval_steps(methods, interval)
    paired = rejects is not None
    levels, rejected = holm_levels(pvalues, methods.alpha, rejects)
    m = len(tested)
    startable = _holm_startable(methods, list(map(len, values_of)), len(base))
    out = []
    k = 0
    for i, ((name, values), (test, p)) in enumerate(zip(arms, tests)):
        diff = math.fsum(values) / len(values) - math.fsum(base) / len(base)
        if test is None:
            out.append(_untested(name, values, base, baseline, diff))
            continue
        low, high = interval(k, levels[k])
        word = _holm_verdict(
            diff, mode, methods, rejected=rejected[k] if paired else None, p_holm=adjusted[i]
        )
        c = Comparison(name, baseline, diff, low, high, 1 - levels[k], test, p, adjusted[i], word)
        c = _if_undecidable(c, (len(values), len(base)), methods, m, startable=startable)
        c = _if_uncalibrated(c, (name, values), base, methods, levels[k])
        out.append(_with_needed(c, values, base, levels[k], methods, needed=needed))
        k += 1
    return tuple(out)


def _holm_startable(methods: Methods, sizes: Sequence[int], base_size: int) -> bool:
    """Whether Holm can start at all: only if some tested arm's smallest attainable p (given its
    size in ``sizes`` and the baseline's) passes the first step, at alpha / (number tested)."""
    m = len(sizes)
    return any(smallest_p(methods.test, n, base_size) * m < methods.alpha for n in sizes)


def _with_needed(
    c: Comparison,
    values: Sequence[float],
    base: Sequence[float],
    alpha: float,
    methods: Methods,
    *,
    needed: bool,
) -> Comparison:
    """The power analysis (when ``needed``), only where the verdict leaves the question open: a
    decided comparison needs no more seeds."""
    if needed and c.verdict in ("no evidence", UNDECIDABLE):
        return _needed(c, values, base, alpha, methods)
    return c


def _interval_steps(
    methods: Methods, interval: Callable[[int, float], tuple[float | None, float | None]]
) -> Callable[[int, float], bool] | None:
    """Welch's test with Welch's interval: each Holm step is decided on the interval itself (whether
    it excludes zero), so the verdict and the interval cannot disagree, not even by rounding; None
    for any other pair (the steps are decided on the p-values)."""
    if methods.test != "welch" or methods.interval != "t":
        return None
    return lambda k, alpha: not _covers_zero(interval(k, alpha))


def _diff_interval(
    methods: Methods, values: Sequence[float], base: Sequence[float], alpha: float
) -> tuple[float | None, float | None]:
    """The arm's difference from the baseline, at confidence 1 - alpha, by the method asked for; none
    where neither group has spread (a zero-width interval would claim the difference known exactly)."""
    if no_spread(values, base):
        return None, None
    if (
        methods.interval == "bootstrap"
    ):  # none where a group has nothing to resample (bootstrap_coverage says)
        low, high = bootstrap.diff_interval(_numpy(), values, base, 1 - alpha)
    else:
        low, high = calibrated_interval(values, base, 1 - alpha)
    # inside [-1, 1] for a proportion: 0 stays inside, so whether it is excluded does not change
    return bounds.clip(low, high, bounds.of_difference(methods.bounds))


def _holm_verdict(
    diff: float, mode: str, methods: Methods, *, rejected: bool | None, p_holm: float | None
) -> str:
    """The verdict of Holm's step: decided on Welch's interval itself where it was (``rejected``:
    whether its step excluded zero), else on the Holm-adjusted p."""
    if rejected is not None:
        return verdict(diff, 0.0, mode) if rejected else "no evidence"
    return verdict(diff, p_holm, mode, methods.alpha)


def _if_undecidable(
    c: Comparison, sizes: tuple[int, int], methods: Methods, m: int, *, startable: bool
) -> Comparison:
    """ "no evidence" that these seeds could never turn into evidence is "cannot decide", saying why:
    the test's smallest attainable p (with ``sizes`` runs of the arm and of the baseline) does not
    pass Holm's first step over ``m`` comparisons, or no comparison's can."""
    floor = smallest_p(methods.test, *sizes)
    if c.verdict != "no evidence" or (floor < methods.alpha and startable):
        return c
    return replace(
        c,
        verdict=UNDECIDABLE,
        reason=f"the {c.test} test with {sizes[0]} and {sizes[1]} seeds cannot give p below "
        f"{floor:.3g}, and Holm over {m} comparisons needs p < {methods.alpha / m:.3g}; "
        "use Welch's test (the default) or more seeds",
    )


def _if_uncalibrated(
    c: Comparison, arm: tuple[str, Sequence[float]], base: Sequence[float], methods: Methods, alpha: float
) -> Comparison:
    """ "no evidence" where Welch's test has no calibrated level at Holm's ``alpha`` is "cannot
    decide": two seeds against hundreds at a level near 0.001, where the pair's spread may be nearly
    all the noise and Welch's df, estimated from the larger group, then promises a tail the pair does
    not have. Its error rate at that ratio stays above ``alpha`` at every level a float holds, so no
    difference, however large, would be called (its interval is the whole line): a verdict these
    seeds cannot give, not evidence of no difference. Says how many seeds of the smaller group would."""
    name, values = arm
    if methods.test != "welch" or c.verdict != "no evidence" or calibrated_level(values, base, alpha) > 0:
        return c
    smaller = name if len(values) <= len(base) else c.baseline
    more = _seeds_to_calibrate(len(values), len(base), alpha)
    then = f"run at least {more} seeds of {smaller}" if more else f"run more seeds of {smaller}"
    return replace(
        c,
        low=_finite(c.low),  # Welch's at no level is the whole line: no interval (a bootstrap's stays)
        high=_finite(c.high),
        verdict=UNDECIDABLE,
        reason=f"Welch's test cannot hold Holm's level {alpha:.3g} with {len(values)} and {len(base)} "
        f"seeds at every ratio of spreads ({smaller}'s few runs may carry nearly all the noise), so no "
        f"difference could be called: {then}, or compare fewer arms (a larger Holm level)",
    )


def _seeds_to_calibrate(n1: int, n2: int, alpha: float) -> int | None:
    """The fewest seeds of the smaller group at which Welch's test has a calibrated level at
    ``alpha`` (None: not within ``CALIBRATION_REACH`` more)."""
    few, many = sorted((n1, n2))
    return next(
        (k for k in range(few + 1, few + CALIBRATION_REACH) if calibrated.level(k, many, alpha) > 0), None
    )


def _finite(bound: float | None) -> float | None:
    return bound if bound is not None and math.isfinite(bound) else None


def _untested(
    name: str, values: Sequence[float], base: Sequence[float], baseline: str, diff: float
) -> Comparison:
    """An arm or a baseline of one run, or two groups whose runs each gave one value: no test is
    possible, said so with how many seeds to run."""
    if no_spread(values, base):
        reason = (
            f"every run of {name} and of {baseline} gave the same value (no spread in either), so "
            "nothing tells seed noise from the difference: Welch's test and its interval need spread "
            "in at least one group; run more seeds (where they too give one value, the seed changes nothing: "
            "check it reaches the trainer), or use --test permutation (exact with ties)"
        )
    else:
        few = name if len(values) < 2 else baseline
        reason = (
            f"{few} has one run: no test is possible with one seed; "
            "run at least 2 (5 or more to detect moderate effects)"
        )
    return Comparison(name, baseline, diff, None, None, None, None, None, None, UNDECIDABLE, reason)


def _covers_zero(interval: tuple[float | None, float | None]) -> bool:
    low, high = interval
    return low is None or high is None or low <= 0 <= high


def _needed(
    c: Comparison, arm: Sequence[float], base: Sequence[float], alpha: float, methods: Methods
) -> Comparison:
    """Seeds per group for 80% power at the observed difference, and what the current n detects: the
    power of the calibrated Welch test at the observed variances (a group whose runs all gave one
    value takes the other's, as the test does: its own 0 would promise power no run gives). For a
    metric in ``methods.bounds`` (a proportion) a detectable difference as wide as the range or wider
    is none the metric can take (5.2 for an accuracy at 2 seeds): None, as where nothing is."""
    test = methods.test
    var_arm, var_base = _spreads(arm, base)
    if var_arm + var_base == 0:  # only the permutation test gets here: it decides once it can
        return c if c.diff == 0 else replace(c, seeds_needed=_permutation_floor(2, None, (0, 0), alpha)[0])
    sd = power.pooled_sd(var_arm, var_base)
    needed = power.seeds_needed(c.diff / sd, alpha, weight=var_arm / (var_arm + var_base))
    detectable = power.detectable(len(arm), len(base), var_arm, var_base, alpha)
    high = _needed_at_spread_top(c.diff / sd, alpha, var_arm / (var_arm + var_base), arm, base, needed)
    if test == "permutation":
        high = _permutation_floor(high, None, (len(arm), len(base)), alpha)[0]
        needed, detectable = _permutation_floor(needed, detectable, (len(arm), len(base)), alpha)
    span = bounds.of_difference(methods.bounds)
    if span is not None and detectable is not None and detectable >= span[1]:
        detectable = None
    return replace(c, seeds_needed=needed, detectable=detectable, seeds_needed_high=high)


SPREAD_TOP = 0.10  # the lower chi-square quantile: the variance's 80% interval's top


def _needed_at_spread_top(
    effect: float,
    alpha: float,
    weight: float,
    arm: Sequence[float],
    base: Sequence[float],
    needed: int | None,
) -> int | None:
    """Seeds per group for 80% power at the observed difference where both groups' variances are
    at the top of their 80% interval (the pooled variance's chi-square interval on the degrees of
    freedom the groups with spread give; their ratio kept): the plug-in count rests on a spread
    estimated from few seeds. None: no plug-in count either, or more than power.MAX_SEEDS."""
    if needed is None:
        return None
    from scipy import stats

    df = sum(len(g) - 1 for g in (arm, base) if _var(g) > 0)
    grow = df / float(stats.chi2.ppf(SPREAD_TOP, df))
    return power.seeds_needed(effect / math.sqrt(grow), alpha, weight)


def _permutation_floor(
    needed: int | None, detectable: float | None, sizes: tuple[int, int], alpha: float
) -> tuple[int | None, float | None]:
    """The permutation test decides nothing where its smallest p cannot pass ``alpha``: no
    difference is detectable there, and no fewer seeds than reach it are needed; beyond, on normal
    runs it has at least the calibrated Welch test's power (benchmarks/bench_power.py --part
    permutation)."""
    reach = next((n for n in range(2, power.MAX_SEEDS + 1) if smallest_p("permutation", n, n) < alpha), None)
    needed = None if needed is None or reach is None else max(needed, reach)
    return needed, detectable if smallest_p("permutation", *sizes) < alpha else None
