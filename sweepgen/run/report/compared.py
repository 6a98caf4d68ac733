"""What the values a report compares are worth before any test: ``--at best`` is biased toward the
better end in the objective's direction, and values taken from runs of different lengths (a final
value at step 20 beside others at step 40, a best over 20 evaluations beside a best over 40) differ
by training, not only by configuration and seed. Each is one warning, in every output."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from sweepgen.run.report import collect as rep
from sweepgen.run.report import groups as grp
from sweepgen.run.report.stats import verdicts as stats

MAX_LISTED = 6  # run names listed for a step few runs ended at


def best_warning(mode: str) -> str:
    """``--at best``'s bias, in the direction of ``mode``: the maximum of noisy evaluations reads
    high, the minimum low, each toward "better"."""
    pick, way = ("maximum", "upward") if mode == "max" else ("minimum", "downward")
    return (
        f"--at best compares each run's best logged value: the {pick} of noisy evaluations is biased "
        f"{way} (toward better), and more so for noisier arms and runs that logged more evaluations; "
        "prefer --at final or --at last:K for a comparison"
    )


# Why `--at best` gives no verdict: the best of a run's evaluations is higher the noisier they are, so
# arms of one true curve whose evaluations differ in noise (another eval temperature, fewer eval
# items) differ at best: 17.35% of such arms (eval noise 2x, 3 seeds, 20 evaluations) were called
# different at 0.05 (benchmarks/RESULTS.md §39), and no test of the best values alone can tell the
# noise from the configuration.
AT_BEST_START = "--at best compares each run's best logged value"  # undecided.py reads the reason by it
AT_BEST_REASON = (
    f"{AT_BEST_START}, and the best of noisier evaluations is higher "
    "(lower with --mode min) whatever the configuration: arms of one true curve whose evaluations "
    "differ in noise differ at best, so no test of these values is a verdict on the configurations "
    "(the difference and its interval are of the best values only); compare with --at final or "
    "--at last:K for a verdict"
)


def no_verdict_at_best(statistics: stats.Statistics) -> stats.Statistics:
    """``--at best``'s comparisons, each "cannot decide" with the reason (``AT_BEST_REASON``): a
    verdict beside the bias's warning was still a wrong verdict (17% of null arms called where one
    arm's eval noise was twice the other's). The difference, its interval and p stay: they are right
    about the values compared; no seeds-needed count (more seeds do not remove the bias)."""
    comparisons = tuple(
        replace(
            c,
            verdict=stats.UNDECIDABLE,
            reason=AT_BEST_REASON,
            seeds_needed=None,
            seeds_needed_high=None,
            detectable=None,
        )
        for c in statistics.comparisons
    )
    return replace(statistics, comparisons=comparisons)


# undecided.py reads the reason by it, as AT_BEST_START (LENGTH_REASON starts so too)
WINDOW_START = "the runs of these two groups logged"
WINDOW_REASON = (
    WINDOW_START + " `{metric}` at different intervals, so their last {k} values "
    "reach back to different steps (a mean reaching back further holds earlier values): a difference "
    "can be how often a run logged, not its configuration (3 + 3 seeds of one rising curve, one group "
    "logging every 5th step: 32% called different at 0.05, benchmarks/RESULTS.md); log every run at the "
    "same steps, or compare with --at final"
)


LENGTH_REASON = (
    "the runs of these two groups logged `{metric}` to different last steps ({steps}), so their values "
    "come from different lengths of training: a difference can be how long a run trained, not its "
    "configuration (arms of one rising curve, one stopped early, are called different the more often "
    "the further it stopped short: benchmarks/RESULTS.md, round fifteen); run them to the same step, or "
    "compare the runs that match (--only)"
)


def no_verdict_across_lengths(
    statistics: stats.Statistics, report: rep.Report, groups: Sequence[grp.Group]
) -> stats.Statistics:
    """``--at final`` or ``--at last:K``: each comparison whose two groups' runs logged the metric to
    different last steps (steps_warning) is "cannot decide" with the reason (``LENGTH_REASON``): the
    warning alone left a verdict on runs of one true curve that differ only in how long they ran.
    Its difference and interval stay, as of the values compared."""
    if report.objective.at == "best":  # no verdict at all there (no_verdict_at_best)
        return statistics
    ends = _ends(_compared(report, groups))
    members = {g.name: g.members for g in groups}

    def steps(c: stats.Comparison) -> list[int]:
        names = [*members.get(c.name, ()), *members.get(c.baseline, ())]
        return sorted({ends[n] for n in names if n in ends})

    comparisons = tuple(
        replace(
            c,
            verdict=stats.UNDECIDABLE,
            reason=LENGTH_REASON.format(metric=report.objective.metric, steps=", ".join(map(str, found))),
            seeds_needed=None,
            seeds_needed_high=None,
            detectable=None,
        )
        if len(found := steps(c)) > 1
        else c
        for c in statistics.comparisons
    )
    return replace(statistics, comparisons=comparisons)


def unmatched(runs: Sequence[rep.RunRecord], metric: str, at: str) -> str | None:
    """Why the values of ``runs`` (one comparison's arm and baseline) cannot be compared, as the
    report refuses them (no_verdict_across_lengths, no_verdict_across_windows): the reason, or None.
    For `run --until-decided`'s looks, which must not decide what the report calls undecidable."""
    if at == "best":
        return None  # --until-decided refuses --at best before any run
    ends = sorted(set(_ends(runs).values()))
    if len(ends) > 1:
        return LENGTH_REASON.format(metric=metric, steps=", ".join(map(str, ends)))
    k = rep.last_k(at)
    if k is not None and len(set(_spans(runs, k).values())) > 1:
        return WINDOW_REASON.format(metric=metric, k=k)
    return None


def best_untested(report: rep.Report, groups: Sequence[grp.Group]) -> str | None:
    """Why no test of the values can say which group is best (winner.sentence's ``untested``): at
    ``--at best`` the bias, at ``--at last:K`` runs whose last K values start at different steps
    (None: the values can be tested)."""
    if report.objective.at == "best":
        return AT_BEST_REASON
    if steps_warning(report, groups):
        return (
            f"the compared runs logged `{report.objective.metric}` to different last steps, so a "
            "difference can be how long a run trained; run them to the same step, or compare the runs "
            "that match (--only)"
        )
    k = rep.last_k(report.objective.at)
    if k is None or not window_warning(report, groups):
        return None
    return (
        f"the compared runs' last {k} values of `{report.objective.metric}` start at different steps "
        "(they logged at different intervals), so a difference can be how often a run logged; log every "
        "run at the same steps, or compare with --at final"
    )


def no_verdict_across_windows(
    statistics: stats.Statistics, report: rep.Report, groups: Sequence[grp.Group]
) -> stats.Statistics:
    """``--at last:K``: each comparison whose two groups' runs' last K values start at different
    steps (window_warning) is "cannot decide" with the reason (``WINDOW_REASON``): the warning alone
    left a verdict that 32% of sweeps of one true curve got wrong. Its difference and interval stay,
    as of the values compared."""
    k = rep.last_k(report.objective.at)
    if k is None:
        return statistics
    spans = _spans(_compared(report, groups), k)
    members = {g.name: g.members for g in groups}
    reason = WINDOW_REASON.format(metric=report.objective.metric, k=k)

    def unlike(c: stats.Comparison) -> bool:
        names = [*members.get(c.name, ()), *members.get(c.baseline, ())]
        return len({spans[n] for n in names if n in spans}) > 1

    comparisons = tuple(
        replace(c, verdict=stats.UNDECIDABLE, reason=reason, seeds_needed=None, seeds_needed_high=None)
        if unlike(c)
        else c
        for c in statistics.comparisons
    )
    return replace(statistics, comparisons=comparisons)


def steps_warning(report: rep.Report, groups: Sequence[grp.Group]) -> list[str]:
    """The grouped runs with a value did not all log the metric to the same last step: which step
    how many ended at, and what that does to the value compared (none: they did, or no step is known)."""
    ends = _ends(_compared(report, groups))
    counts = Counter(ends.values())
    if len(counts) < 2:
        return []
    common = counts.most_common(1)[0][0]
    others = "; ".join(_step_part(step, ends) for step in sorted(counts) if step != common)
    return [
        f"the compared runs did not all log `{report.objective.metric}` to the same last step: "
        f"{counts[common]} ended at step {common}; {others}: {_what_differs(report.objective.at)}, so "
        "a difference can be the runs' length, not their configuration; give the runs the same "
        "length, or compare the runs that match"
    ]


def window_warning(report: rep.Report, groups: Sequence[grp.Group]) -> list[str]:
    """Runs that ended at the same step but whose value covers different stretches of training:
    ``--at last:K`` averages the last K logged values, which reach back to an earlier step in a run
    that logged less often (its mean holds earlier, worse values); ``--at best`` is the best of as
    many evaluations as a run logged (more of them, a higher maximum). Which runs, and what that
    does (none: the runs agree, or --at final)."""
    k = rep.last_k(report.objective.at)
    if k is None and report.objective.at != "best":
        return []
    spans = _spans(_compared(report, groups), k)
    counts = Counter(spans.values())
    if len(counts) < 2:
        return []
    common = counts.most_common(1)[0][0]
    unit = "step" if k is not None else "evaluations"
    what, read = (
        (f"the last {k} values start at", "a mean reaching back further holds earlier values")
        if k is not None
        else ("the best is taken over", "the best of more evaluations is biased further toward better")
    )
    others = "; ".join(_part(v, spans, unit) for v in sorted(counts) if v != common)
    return [
        f"the compared runs logged `{report.objective.metric}` at different intervals: {what} "
        f"{_value(common, unit)} in {counts[common]} runs; {others}: {read}, so a difference can be "
        "how often a run logged, not its configuration; log every run at the same steps, or use --at final"
    ]


def _spans(runs: Sequence[rep.RunRecord], k: int | None) -> dict[str, int]:
    """Per run, the step its last ``k`` values start at (k None: how many values its best is of)."""
    if k is None:
        return {r.name: len(r.curve) for r in runs if r.curve}
    return {r.name: r.curve[-k][0] for r in runs if len(r.curve) >= k}


def _value(v: int, unit: str) -> str:
    return f"step {v}" if unit == "step" else f"{v} evaluations"


def _part(v: int, spans: Mapping[str, int], unit: str) -> str:
    names = [n for n, s in spans.items() if s == v]
    listed = ", ".join(names[:MAX_LISTED]) + (", ..." if len(names) > MAX_LISTED else "")
    return f"{_value(v, unit)} in {len(names)} ({listed})"


def unpaired(
    report: rep.Report, groups: Sequence[grp.Group], seed: str | None, baseline: str | None
) -> list[str]:
    """The baseline and an arm ran the same seeds, yet the test compares them as independent
    samples: said, with what that does (none: no baseline, or no arm shares two seeds with it)."""
    seeds = _seeds(report, groups, seed)
    base = seeds.pop(baseline, set()) if baseline is not None else set()
    shared = sorted(set().union(*(own & base for own in seeds.values() if len(own & base) >= 2)), key=repr)
    if not shared:
        return []
    return [
        f"the groups compared ran the same seeds ({', '.join(map(repr, shared[:MAX_LISTED]))}"
        f"{', ...' if len(shared) > MAX_LISTED else ''}), but the test treats them as independent "
        "samples, not as pairs by seed: where a seed makes runs alike (the same initialisation and data "
        "order) it errs less often than its level and needs more seeds than a paired comparison; where a "
        "seed pushed two arms opposite ways it would err more"
    ]


def seed_changed_nothing(report: rep.Report, groups: Sequence[grp.Group], seed: str | None) -> list[str]:
    """Every group run at two or more seeds gave the very same value at each: the seed reaches
    nothing that varies a run (TRL's KTO trainer, measured: seeds 0 and 1 log the same numbers at
    every step), so intervals over seeds hold no seed noise and more seeds add nothing. Said, since
    "cannot decide ... run more seeds" alone would send the user to run more of the same."""
    seeds = _seeds(report, groups, seed)
    valued = {r.name: r.value for r in _compared(report, groups) if r.value is not None}
    repeated = [g for g in groups if len(seeds.get(g.name, set())) >= 2]
    values = [[valued[n] for n in g.members if n in valued] for g in repeated]
    if not repeated or not _tied_off_the_integers(values):
        return []
    return [
        f"each seed gave the very same value in every group run at two or more seeds "
        f"({len(repeated)} group(s)): the seed (`{seed}`) changes nothing these runs measure (the "
        "trainer may fix its data order and start from the same weights whatever the seed), so the "
        "intervals and tests over seeds hold no seed-to-seed noise and more seeds will add nothing; "
        "check that the seed reaches the trainer's randomness"
    ]


def _tied_off_the_integers(values: list[list[float]]) -> bool:
    """Every group's seeds gave one value, and not only whole numbers: a count, or a share
    saturated at 0 or 1, ties by itself."""
    if any(len(set(v)) > 1 for v in values):
        return False
    return not all(float(x).is_integer() for v in values for x in v)


def _seeds(report: rep.Report, groups: Sequence[grp.Group], seed: str | None) -> dict[str, set[object]]:
    """Each group's seed values over its runs with a value (none without a seed path)."""
    if seed is None:
        return {}
    valued = {r.name: r.values.get(seed) for r in _compared(report, groups)}
    return {g.name: {valued[n] for n in g.members if n in valued} for g in groups}


def _compared(report: rep.Report, groups: Sequence[grp.Group]) -> list[rep.RunRecord]:
    """The runs the statistics compare: grouped, with a value."""
    grouped = {n for g in groups for n in g.members}
    return [r for r in report.finished if r.name in grouped and r.value is not None]


def _ends(runs: Sequence[rep.RunRecord]) -> dict[str, int]:
    """Each run's last step of the metric, where known."""
    return {r.name: r.score.final_step for r in runs if r.score.final_step is not None}


def _what_differs(at: str) -> str:
    if at == "best":
        return "a best over a longer run is the best of more evaluations"
    return "values from earlier in training are compared with later ones"


def _step_part(step: int, ends: Mapping[str, int]) -> str:
    names = [n for n, s in ends.items() if s == step]
    listed = ", ".join(names[:MAX_LISTED]) + (", ..." if len(names) > MAX_LISTED else "")
    return f"{len(names)} at step {step} ({listed})"
