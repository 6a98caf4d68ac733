"""The sequential test behind `sweepgen run --until-decided`: seeds are added in rounds, and after each
round every comparison still open is tested against the baseline, with a boundary that keeps the
family-wise error rate over all rounds and all comparisons at alpha.

Testing after every round at the fixed-n level would not: each look is one more chance for noise to
cross (with 9 looks at alpha 0.05 a null comparison is called at about 3x that rate). The rule here is
a group-sequential design with **alpha-spending** (Lan & DeMets 1983, "Discrete sequential boundaries
for clinical trials", Biometrika 70:659-663): the looks are fixed before the first run (after n_1, n_1 +
r, ... seeds per group, up to ``max_seeds``), a spending function gives each look k its share
``alpha_k = f(t_k) - f(t_(k-1))`` of alpha at information fraction t_k = n_k / max_seeds, and look k
tests the comparisons still open with `report`'s test, Welch's at the level calibrated over the
variance ratio (sweepgen.run.report.stats.calibrated), under Holm's step-down at ``alpha_k``.

What is controlled, precisely: the probability that any comparison whose arm and baseline have the
same mean is ever declared ``better`` or ``worse`` (at any look) is at most alpha. Proof: before the
first wrong verdict every true null is still open, so the first wrong verdict at look k is a Holm
rejection among them at level alpha_k, which has probability at most alpha_k (Holm's strong control,
given the test keeps its level: the calibrated one does at every ratio of spreads on normal runs,
plain Welch does not at 2-5 seeds); summing over looks gives at most sum(alpha_k) = alpha. This is
the union (Bonferroni) bound over looks, not the exact multivariate-normal boundary of a classical
design: it spends slightly more seeds than an exact boundary would, but it needs no normal
approximation of the correlated statistics, which at 2-5 seeds per group would not hold. A
comparison that never crosses is "no evidence" when the budget is spent: no futility stop (stopping an
arm for futility cannot raise the error rate, but it is a choice about power that the user makes with
``--max-seeds``).

Spending functions (``f(0) = 0``, ``f(1) = alpha``): ``pocock`` = alpha * ln(1 + (e - 1) t) (Lan &
DeMets' Pocock-type, spends evenly: the default, for an early decision on a large effect) and ``obf``
= 2 - 2 Phi(z_(1 - alpha/2) / sqrt t) (O'Brien-Fleming-type: almost nothing early, close to alpha at
the last look).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from sweepgen.errors import UserError
from sweepgen.run.report.stats import looks_level
from sweepgen.run.report.stats import verdicts as stats

SPENDING = ("pocock", "obf")
OPEN = "open"  # not yet decided; at the last look: no evidence within the budget
MIN_SEEDS = 2  # Welch's test needs two runs per group


def spent(t: float, alpha: float, kind: str) -> float:
    """The spending function: alpha spent by information fraction ``t`` in [0, 1]."""
    if t <= 0:
        return 0.0
    t = min(t, 1.0)
    if kind == "pocock":
        return alpha * math.log(1 + (math.e - 1) * t)
    if kind == "obf":
        from scipy import stats as sps

        z = float(sps.norm.ppf(1 - alpha / 2))
        return float(2 * sps.norm.sf(z / math.sqrt(t)))
    raise UserError(f"unknown spending function {kind!r}", hint=f"one of {', '.join(SPENDING)}")


@dataclass(frozen=True)
class Schedule:
    """The looks of a sequential comparison, fixed before the first run."""

    per_round: int
    max_seeds: int
    alpha: float = stats.ALPHA
    spending: str = "pocock"

    def __post_init__(self) -> None:
        if self.per_round < 1:
            raise UserError(f"--seeds-per-round {self.per_round}", hint="at least 1")
        if self.max_seeds < MIN_SEEDS:
            raise UserError(
                f"--max-seeds {self.max_seeds}",
                hint=f"at least {MIN_SEEDS}: Welch's test needs two runs per group",
            )
        if self.spending not in SPENDING:
            raise UserError(f"--spending {self.spending}", hint=f"one of {', '.join(SPENDING)}")

    @property
    def looks(self) -> tuple[int, ...]:
        """Seeds per group at each look: the first round runs at least two, each later one
        ``per_round`` more, the last exactly ``max_seeds``."""
        first = min(max(MIN_SEEDS, self.per_round), self.max_seeds)
        return (*range(first, self.max_seeds, self.per_round), self.max_seeds)

    @property
    def alphas(self) -> tuple[float, ...]:
        """Each look's share of alpha (they sum to alpha)."""
        cumulative = [spent(n / self.max_seeds, self.alpha, self.spending) for n in self.looks]
        cumulative[-1] = self.alpha  # f(1) = alpha exactly, whatever the rounding of f
        return tuple(b - a for a, b in zip([0.0, *cumulative[:-1]], cumulative))


def mean_level(schedule: Schedule) -> float:
    """The level of the t interval of a group mean on the seeds the looks gave it, at every look:
    calibrated jointly over the looks by simulation of the schedule's own stops (looks_level), so
    that at the look its seeds stopped at it covers 95% and not below. The union bound's levels
    (``union_mean_level``) covered 98.2-99.7%; a fixed-n 95% interval as little as 92.2% (a noisy arm
    stopped early because its seeds landed far: benchmarks/RESULTS.md §43)."""
    return looks_level.level(schedule)


def union_mean_level(schedule: Schedule, n: int, level: float = stats.LEVEL) -> float:
    """The mean intervals' level before round thirteen (kept for the benchmarks that measured it): 1 -
    the share of ``1 - level`` the schedule spends at the look after ``n`` seeds (the smallest share
    where no look had ``n``): whichever look stopped a group it misses with at most ``1 - level`` (the
    union bound over looks), but covers 98.2-99.7% in fact."""
    shares = dict(zip(schedule.looks, schedule.alphas))
    share = shares.get(n, min(schedule.alphas))
    return 1 - share * (1 - level) / schedule.alpha


NONE_UNTESTABLE: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Crossing:
    """One open comparison at one look: its test and the boundary it was held to."""

    name: str
    n_arm: int
    n_base: int
    diff: float
    p: float | None  # None: a group with fewer than two runs (a failed run), or neither with spread; p = 1
    boundary: float  # Holm's step at this look: the p it had to go below
    verdict: str  # better | worse | open
    # the repeated-confidence interval: the difference's calibrated interval at 1 - boundary, which
    # excludes 0 where the look crossed; None: no test, or a record written before it was kept
    low: float | None = None
    high: float | None = None
    # why this look could not test the comparison though both groups have values (the report's
    # "cannot decide" of runs that logged the metric to different last steps); None: tested, or no test
    # for the plain reason (NO_TEST)
    reason: str | None = None


def look(
    arms: Sequence[tuple[str, Sequence[float]]],
    base: Sequence[float],
    alpha: float,
    mode: str,
    untestable: Mapping[str, str] = NONE_UNTESTABLE,
) -> list[Crossing]:
    """Test every open comparison (``arms``, each against ``base``) at one look, Holm at ``alpha``.
    ``untestable``: arm -> why its values cannot be compared at this look (the report refuses them):
    no test, open, the reason kept, and still counted by Holm (p taken as 1)."""
    # the calibrated p (stats.difference_test): plain Welch errs above its level where the spreads
    # differ (up to 5 seeds a side, three arms 10x noisier: 6.35% of null sweeps called at alpha 0.05,
    # benchmarks/RESULTS.md), and the union bound over looks holds only for a test that keeps its level
    tested = [None if name in untestable else stats.difference_test(values, base)[1] for name, values in arms]
    pvalues = [1.0 if p is None else p for p in tested]  # untestable: open, and still counted by Holm
    levels, rejected = stats.holm_levels(pvalues, alpha)
    out = []
    for (name, values), p, level, crossed in zip(arms, tested, levels, rejected):
        diff = _mean(values) - _mean(base) if values and base else math.nan
        word = stats.verdict(diff, 0.0, mode) if crossed else OPEN
        low, high = _repeated_interval(values, base, p, level)
        out.append(
            Crossing(name, len(values), len(base), diff, p, level, word, low, high, untestable.get(name))
        )
    return out


def _repeated_interval(
    values: Sequence[float], base: Sequence[float], p: float | None, boundary: float
) -> tuple[float | None, float | None]:
    """The interval of the difference this look's test inverts: the calibrated interval at
    1 - ``boundary`` (Jennison & Turnbull's repeated-confidence interval). Its miss rate at this look
    is at most ``boundary``, so over every look an arm was held to it misses with at most the sum of
    its boundaries (at most alpha): the interval at whichever look stopped the arm keeps that
    coverage, where a fixed-n interval on the seeds the looks chose does not. None without a test;
    where no calibrated level exists, infinite ends (nothing excluded)."""
    if p is None:
        return None, None
    return stats.calibrated_interval(values, base, 1 - boundary)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


@dataclass(frozen=True)
class Outcome:
    """A whole sequential comparison on values known in advance (for simulations and tests): the
    verdict of each arm, the look it was decided at (None: never), and the seeds each group ran."""

    verdicts: dict[str, str]
    decided_at: dict[str, int | None]
    seeds: dict[str, int]
    # each look held: seeds per group, alpha spent, the open comparisons' crossings
    looks: list[tuple[int, float, tuple[Crossing, ...]]] = field(default_factory=list)


def simulate(
    values: dict[str, Sequence[float]], baseline: str, schedule: Schedule, mode: str = "max"
) -> Outcome:
    """Run the schedule on each group's values in order (a group's first n are its first n seeds), as
    `run --until-decided` does: an arm stops getting seeds once decided, the baseline once all are."""
    arms = [n for n in values if n != baseline]
    verdicts = dict.fromkeys(arms, OPEN)
    decided_at: dict[str, int | None] = dict.fromkeys(arms, None)
    seeds = dict.fromkeys(values, 0)
    held: list[tuple[int, float, tuple[Crossing, ...]]] = []
    for k, (n, alpha) in enumerate(zip(schedule.looks, schedule.alphas)):
        still = [a for a in arms if verdicts[a] == OPEN]
        if not still:
            break
        for name in [*still, baseline]:
            seeds[name] = n
        crossings = look([(a, values[a][:n]) for a in still], values[baseline][:n], alpha, mode)
        _settle(crossings, k, verdicts, decided_at)
        held.append((n, alpha, tuple(crossings)))
    return Outcome(verdicts, decided_at, seeds, held)


def _settle(
    crossings: Sequence[Crossing], k: int, verdicts: dict[str, str], decided_at: dict[str, int | None]
) -> None:
    """Record the arms look ``k`` decided; an open arm stays open, to be looked at again."""
    for c in crossings:
        if c.verdict != OPEN:
            verdicts[c.name], decided_at[c.name] = c.verdict, k
