"""The group with the best mean, and what its interval is worth once it was picked as the best.

Each group's t interval covers that group's true mean 95% of the time; the group whose mean came out
best is, among groups alike, the one whose seeds happened to land high, so its interval read as the
winner's value covers far less (simulated, normal runs, every group alike: at 5 groups of 3 seeds
91%, at 20 groups of 5 seeds 75%, at 100 groups of 5 seeds 52%; benchmarks/RESULTS.md §28). The
statistics table and the page sort groups best first, inviting that reading. So a sentence names the
best group with the interval that holds for whichever group is picked: the t interval at level
1 - alpha / K for each of the K groups (Bonferroni), as a search's best trial gets
(sweepgen/run/search/best_value.py, whose interval this is).

K counts every configuration, those without a value too (every seed pruned or failed): the best was
picked among the survivors, and a pruner keeps the configurations whose early values were high, so
Bonferroni over the survivors alone is no bound for the one picked (50 trials of 5 seeds, 3 kept by
a pruner reading early values close to the final ones: the best survivor's interval over the 3
covered 84.4%, over all 50 98.8%; benchmarks/RESULTS.md §29). A pruned run's final value is what it
would have been had the others run on, so the union bound over all K holds for the survivors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sweepgen.run.report.stats import bounds
from sweepgen.run.report.stats import verdicts as stats
from sweepgen.run.search import best_value


def sentence(
    statistics: stats.Statistics,
    values: Mapping[str, Sequence[float]],
    configurations: int = 0,
    *,
    untested: str | None = None,
) -> list[str]:
    """The best group's simultaneous interval, in one sentence (none: fewer than two groups, or the
    best one has no interval of its own: one run, or runs that all gave one value).
    ``configurations``: how many the sweep has, those without a value too (dropout.configurations).
    ``untested``: why no test of the values can say which group is best (``--at best``): said in
    place of the test, never "better than every other group"."""
    groups = statistics.groups
    if len(groups) < 2:
        return []
    family = max(len(groups), configurations)
    best = (max if statistics.mode == "max" else min)(groups, key=lambda g: g.mean)
    held = best_value.interval(values.get(best.name, ()), family)
    if best.low is None or held is None:
        return []
    low, high = bounds.clip(*held, statistics.methods.bounds)
    return [
        f"{best.name}{_ties(groups, best)} has the best mean of {len(groups)} groups; read as the best "
        f"one's value its {best_value.LEVEL:.0%} interval is optimistic (the winner's curse): "
        f"[{low:.6g}, {high:.6g}] holds for whichever of the {_among(family, len(groups))} is picked "
        f"(Bonferroni, each at {1 - (1 - best_value.LEVEL) / family:.4%})"
        + (
            f"; which group is best is not tested: {untested}"
            if untested
            else _is_it_best(statistics, values, best)
        )
    ]


def _is_it_best(
    statistics: stats.Statistics, values: Mapping[str, Sequence[float]], best: stats.GroupStats
) -> str:
    """Whether the best mean is the best group's: the report's test of it against each other group
    (the best as the baseline, Holm over the others, at the report's alpha). "Best" is said only
    where it is better than every one; else the groups it is not shown better than are named. A
    best mean alone, beside overlapping intervals, read as "the best group" with no test.

    Wrong at most alpha of the time, though the best was picked by its mean: a wrong "best" is a
    group i better than every other, the truly best j among them, with mu_i <= mu_j; the one group
    picked (the best mean) was then called better than j, a test of i against j rejected at a level
    at most alpha (Holm's last step) in i's favour, and those events, one per i, are disjoint (one
    best mean): the chance is at most that of the test of two groups alike rejecting, alpha (two
    groups alike at the top, the rest far below, is the worst case: measured in
    benchmarks/bench_stats_round10.py --part best)."""
    others = [g for g in statistics.groups if g is not best]
    named = [
        (best.name, list(values.get(best.name, ()))),
        *((g.name, list(values.get(g.name, ()))) for g in others),
    ]
    tested = stats.compare(
        named,
        baseline=best.name,
        mode=statistics.mode,
        methods=statistics.methods,
        seeds_needed=False,
        verdicts_only=True,  # the verdicts alone are read: a group Holm cannot reject costs no calibration
    )
    methods = statistics.methods.describe()
    how = (
        f"{methods['test']}, {best.name} against each of the other {len(others)}, Holm, "
        f"alpha {methods['alpha']}"
    )
    beaten = {c.name for c in tested.comparisons if c.verdict == "worse"}  # the other is worse than the best
    if len(beaten) == len(others):
        return (
            f"; it is better than every other group ({how}): the best, with that error rate for this "
            f"metric alone; {FAMILY.format(alpha=methods['alpha'])}"
        )
    open_ = [g.name for g in others if g.name not in beaten]
    shown = ", ".join(open_[:MAX_NAMED]) + (
        f" and {len(open_) - MAX_NAMED} more" if len(open_) > MAX_NAMED else ""
    )
    return (
        f"; it is not shown better than {shown} ({how}): these seeds do not tell which group is best, "
        "and the best mean alone is no verdict"
    )


MAX_NAMED = 5  # groups named that the best is not shown better than; the rest counted
# the best group's test is one metric's, with or without a baseline (joint.family says the same of
# the comparisons with a baseline, and was the only place it was said: a report without --compare,
# or the page's table without a baseline, called a group "better than every other" with no word that
# each metric read is a test of its own; two or three metrics over the same runs gave a wrong verdict
# in some report in up to 7.4-8.5% of sweeps at 2-5 seeds, benchmarks/RESULTS.md §45)
FAMILY = (
    "a report of another metric over these runs tests its own best at {alpha}, so with M metrics read "
    "a wrong 'best' in any is up to M x {alpha} likely: name the metric before the runs"
)


def _among(family: int, groups: int) -> str:
    if family == groups:
        return str(groups)
    return (
        f"{family} configurations (the {family - groups} without a value counted: not run, pruned or "
        "failed, one could have been the best had it finished)"
    )


def _ties(groups: Sequence[stats.GroupStats], best: stats.GroupStats) -> str:
    tied = [g.name for g in groups if g.mean == best.mean and g is not best]
    return f" (tied with {', '.join(tied)})" if tied else ""
