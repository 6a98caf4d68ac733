"""The statistics table of a sweep whose seeds `run --until-decided` added: its verdicts and
difference intervals are the sequential test's.

The table's own test is a fixed-n one: it holds its level when the seeds were fixed before the
runs. Under `--until-decided` they were not: an arm stops getting seeds once its look crosses, the
baseline goes on, and what each group ran depends on the values seen. A fixed-n verdict on those
seeds has no error rate it is known to keep (4.25-5.2% of null sweeps at alpha 0.05 where the looks
called 0.9-2%: benchmarks/RESULTS.md §28), and it can call an arm the sequential test left open, or
leave open one it called, beside the lines that say the opposite. The sequential test's verdict is
the one whose error rate is proven (sweepgen.run.report.stats.sequential: at most alpha over every look and
comparison), so each arm the record holds takes it: ``better`` / ``worse`` where it crossed, ``no
evidence`` where it did not.

The difference interval beside it is the look's repeated-confidence interval (the interval the
look's test inverts, at 1 - its boundary, on that look's seeds), where the record keeps one: it
excludes 0 exactly where the look crossed, so "better" never stands beside an interval holding 0,
and whichever look stopped the arm it misses with at most alpha (each look's boundary is at most the
alpha spent there, and those sum to alpha: the union bound over looks), the level column. A fixed-n
interval on the seeds the looks chose agreed with neither. The p-values stay the
fixed-n ones, said so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from sweepgen.run.report.stats import bounds, sequential
from sweepgen.run.report.stats import verdicts as stats
from sweepgen.run.report.stats.sequential_record import Held

FIXED_N = ("better", "worse", "no evidence")  # a "cannot decide" says why the seeds cannot: kept


def adjusted(
    statistics: stats.Statistics,
    decided: Mapping[str, str],
    held: Mapping[str, Held] | None = None,
    schedule: sequential.Schedule | None = None,
) -> tuple[stats.Statistics, list[str]]:
    """``statistics`` with each arm in ``decided`` (its sequential verdict) given that verdict and,
    where ``held`` has it, its repeated-confidence interval; with the looks' ``schedule``, the mean
    interval of each group the looks ran (the arms and the baseline) at the looks' level
    (``_looks_means``); the sentences saying so and naming the arms whose fixed-n verdict differed."""
    statistics, means = _looks_means(statistics, decided, schedule)
    out, said = _adjusted(statistics, decided, held or {})
    return out, [*said, *means]


# Why the best mean is not tested after the looks: winner.py's test is a fixed-n one, and the seeds
# each group ran were chosen by the looks (an arm stops once its look crossed, its seeds having
# landed high), where a fixed-n verdict keeps no known error rate (this module's docstring).
LOOKS_CHOSE = (
    "the seeds each group ran were chosen by run --until-decided's looks, on which a fixed-n test of "
    "the best against each other group keeps no known error rate; the looks' verdicts against the "
    "baseline are the ones that keep theirs"
)


def best_untested(after_looks: list[str]) -> str | None:
    """Why the best mean's test (winner.sentence) is not run: the table's verdicts are the looks'
    (``after_looks``: the sentences ``adjusted`` gave; None without them)."""
    return LOOKS_CHOSE if after_looks else None


def _looks_means(
    statistics: stats.Statistics, decided: Mapping[str, str], schedule: sequential.Schedule | None
) -> tuple[stats.Statistics, list[str]]:
    """Each group the looks ran (an arm they tested, the baseline) with the t interval of its mean
    at ``sequential.mean_level`` (one level for every look, calibrated over the schedule's stops),
    and the sentence saying so; as it is without a schedule (a record of another comparison) or an
    arm the record holds."""
    if schedule is None or not any(g.name in decided for g in statistics.groups):
        return statistics, []
    ran = {statistics.baseline, *decided}
    chosen = [g for g in statistics.groups if _widened(g, ran)]
    if not chosen:
        return statistics, []
    level = sequential.mean_level(schedule)
    widened = {g.name: _mean_at(g, level, statistics.methods) for g in chosen}
    groups = tuple(widened.get(g.name, g) for g in statistics.groups)
    named = [f"{g.name} ({g.n} seeds)" for g in chosen]
    return replace(statistics, groups=groups), [_means_sentence(named, level)]


def _widened(g: stats.GroupStats, ran: set[str | None]) -> bool:
    """A group the looks ran, with an interval of its own to widen (two runs or more, a spread)."""
    return g.name in ran and g.sd is not None and g.low is not None and g.n >= 2


def _means_sentence(widened: list[str], level: float) -> str:
    return (
        f"the mean intervals of the groups the looks ran ({', '.join(widened)}) are t intervals at "
        f"{level:.2%}, the looks' level: one level for every look, calibrated by simulating this "
        f"schedule's own stops on normal runs (arms 0-3 baseline sds away, spreads a third to 3 times "
        f"the baseline's, one arm or three) so that at the look a group's seeds stopped at its interval "
        f"covers its mean at least {stats.LEVEL:.0%} of the time; {LOOKS_COVER}; a fixed-n 95% interval "
        "on the seeds the looks chose covers less (92.2-93.7% at each schedule's worst case measured: an arm "
        "stopped early because its seeds landed far)"
    )


# What the looks' mean intervals cover in fact (benchmarks/bench_stats_round13.py --part fresh: the
# calibration's own cases on fresh draws, 20,000 a case, seven schedules of 1-5 seeds a round; --part
# means / means_rounds: sequential.simulate, the report's own looks, 300 sweeps a case, where a 300-sweep
# rate has a standard error of about 1.1 points).
LOOKS_COVER = (
    "measured, they covered 95.5-98.0% at the calibration's worst and best cases on fresh draws, and "
    "94.3-99.3% in 300 sweeps a case through the report's own looks (benchmarks/RESULTS.md §43)"
)


def _mean_at(g: stats.GroupStats, level: float, methods: stats.Methods) -> stats.GroupStats:
    """``g`` with the t interval of its mean at ``level`` (clipped to the metric's bounds)."""
    from scipy import stats as sps

    assert g.sd is not None
    half = float(sps.t.ppf(1 - (1 - level) / 2, g.n - 1)) * g.sd / math.sqrt(g.n)
    low, high = bounds.clip(g.mean - half, g.mean + half, methods.bounds)
    kind = f"t at {level:.2%} (the looks')"
    return replace(
        g,
        low=low,
        high=high,
        interval=kind + bounds.said((low, high) != (g.mean - half, g.mean + half), methods.bounds),
    )


def _adjusted(
    statistics: stats.Statistics, decided: Mapping[str, str], held: Mapping[str, Held]
) -> tuple[stats.Statistics, list[str]]:
    """The arms' verdicts and repeated-confidence intervals (``adjusted``)."""
    comparisons, changed, repeated = _each_adjusted(statistics, decided, held)
    if not any(c.name in decided for c in comparisons):  # a record of other arms: nothing to say
        return statistics, []
    others = [c.name for c in comparisons if c.name in decided and c.name not in held]
    out = replace(statistics, comparisons=tuple(comparisons))
    if repeated:
        out = replace(out, levels_from="Holm's step, or for an arm the looks held, the looks' coverage")
    return out, [_sentence(changed, repeated, others) + _bootstrap_words(statistics.methods, repeated)]


def _each_adjusted(
    statistics: stats.Statistics, decided: Mapping[str, str], held: Mapping[str, Held]
) -> tuple[list[stats.Comparison], list[str], list[str]]:
    """Each comparison with its arm's sequential verdict and, where held, its look's interval; the
    arms whose fixed-n verdict differed; the arms given a look's interval."""
    changed: list[str] = []
    comparisons = []
    repeated: list[str] = []
    for c in statistics.comparisons:
        looks = decided.get(c.name)
        if looks is None or c.verdict not in FIXED_N:
            comparisons.append(c)
            continue
        word = "no evidence" if looks == sequential.OPEN else looks
        if word != c.verdict:
            changed.append(f"{c.name} (fixed-n: {c.verdict})")
        c = _with_verdict(c, word)
        if c.name in held:
            c = _repeated(c, held[c.name], statistics.methods)
            repeated.append(f"{c.name} at look {held[c.name].look} ({held[c.name].seeds} seeds per group)")
        comparisons.append(c)
    return comparisons, changed, repeated


def _with_verdict(c: stats.Comparison, word: str) -> stats.Comparison:
    """``c`` given the looks' verdict; an arm the looks decided needs no more seeds (as
    stats._with_needed)."""
    c = replace(c, verdict=word)
    if word == "no evidence":
        return c
    return replace(c, seeds_needed=None, seeds_needed_high=None, detectable=None)


def _repeated(c: stats.Comparison, h: Held, methods: stats.Methods) -> stats.Comparison:
    """``c`` with the look's interval and the coverage it keeps over the looks (infinite ends, no
    calibrated level at that look: no interval, as `report` prints one)."""
    if not (math.isfinite(h.low) and math.isfinite(h.high)):
        return replace(c, low=None, high=None, level=None)
    low, high = bounds.clip(h.low, h.high, bounds.of_difference(methods.bounds))
    return replace(c, low=low, high=high, level=h.level)


def _bootstrap_words(methods: stats.Methods, repeated: list[str]) -> str:
    """With --interval bootstrap: the looks' intervals are not bootstrap ones, and why they are kept.
    A percentile bootstrap at a look's 2-5 seeds covers 67-88% of true differences at 95%
    (bootstrap.py), so one inverted at each look's boundary would not keep the looks' coverage;
    Welch's at the calibrated level does, and it is the interval each look's test inverted. The
    table's title said "percentile bootstrap" over every interval, these included."""
    if methods.interval != "bootstrap" or not repeated:
        return ""
    return (
        "; with --interval bootstrap those repeated intervals are still Welch's at the calibrated level "
        "(the test each look inverted), not the bootstrap's: a percentile bootstrap at a look's few seeds "
        "covers less than its level, so it would not keep the looks' coverage"
    )


def _sentence(changed: list[str], repeated: list[str], others: list[str]) -> str:
    out = (
        "the verdicts are the sequential test's (run --until-decided): a fixed-n verdict on seeds "
        "added until a look crossed keeps no known error rate; the p-values, and the seeds needed and "
        "detectable differences of arms left open (a fixed-n test's power, not the looks'), are fixed-n "
        "and do not account for the looks"
    )
    if repeated:
        out += (
            "; the difference intervals of "
            + ", ".join(repeated)
            + " are the looks' repeated-confidence intervals (each at its look's boundary, on that look's "
            "seeds, so they agree with the verdicts; whichever look stopped an arm, its interval covers "
            "the true difference with at least the level column's share, by the union bound over looks)"
        )
        if others:  # an arm whose last look had no test keeps the fixed-n interval
            out += f"; those of {', '.join(others)} are fixed-n"
    else:  # a record written before the looks kept their intervals
        out += (
            "; the difference intervals are fixed-n too (an interval's coverage after stopping may be "
            "below its level)"
        )
    if changed:
        out += f"; the fixed-n test alone would have said otherwise for {', '.join(changed)}"
    return out
