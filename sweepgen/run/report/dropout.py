"""The runs of each seed group that ended without a value to compare: failed, cancelled, pruned, or
finished without the metric (not logged, NaN at the end). A run not started or still running has no
outcome yet (`run --until-decided` never starts the later seeds of a group it decided): it is not a
loss, and `report`'s table shows its state. The statistics are over the runs
with a value, so a group that lost seeds is compared on its survivors; where the loss comes from the
arm itself (a learning rate that diverges on some seeds) the survivors are its better seeds and the
group looks better than it is. Nothing here changes a number: it says, per group, what was left out,
beside the verdict it may bias (terminal, statistics.csv/json, the page's notes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sweepgen.run.core.base import RunState
from sweepgen.run.report import collect as rep
from sweepgen.run.report import groups as grp

MAX_LISTED = 6  # run names listed per group; the count is always whole
ABSENT = ""  # lost_runs' key for the runs of configurations none of whose runs has a value (no group)


def lost_runs(
    report: rep.Report, groups: Sequence[grp.Group], plan: grp.SeedPlan, seeds: str
) -> dict[str, list[str]]:
    """Per seed group (by name), each of its runs without a value, as ``name (why)``, in run order;
    under ``ABSENT`` those of configurations with no run left (every seed pruned or failed: no group).
    Only where seeds are grouped (a seed path): without one every run is its own group. ``seeds``:
    the seed set the statistics use (all | tune | test)."""
    if plan.path is None:
        return {}
    keys = [p for p in report.varying if p != plan.path]
    named = {_key(g.values, keys): g.name for g in groups}
    out: dict[str, list[str]] = {}
    for run in _unscored(report, plan, seeds):
        group = named.get(_key(run.values, keys), ABSENT)
        out.setdefault(group, []).append(f"{run.name} ({_why(run)})")
    return out


def configurations(report: rep.Report, plan: grp.SeedPlan, seeds: str) -> int:
    """How many configurations the runs of the chosen seeds belong to, with a value or not (a
    configuration every run of which was pruned or failed counts: it could have been the best had it
    finished); 0 where seeds are not grouped."""
    if plan.path is None:
        return 0
    keys = [p for p in report.varying if p != plan.path]
    chosen = _chosen(report, plan, seeds)
    return len({_key(r.values, keys) for r in report.runs if r.name in chosen})


def _chosen(report: rep.Report, plan: grp.SeedPlan, seeds: str) -> set[str]:
    """The names of the runs of the seeds chosen (``--seeds``), chosen as grouping chooses them:
    a run the statistics never meant to use is neither lost nor a configuration of theirs."""
    members = [grp.Member(r.name, r.variant, r.values) for r in report.runs]
    return {m.run for m in grp.select_seeds(members, plan, seeds)}


def _unscored(report: rep.Report, plan: grp.SeedPlan, seeds: str) -> list[rep.RunRecord]:
    """The runs of the seeds chosen that have no value to compare."""
    chosen = _chosen(report, plan, seeds)
    scored = {r.name for r in report.finished if r.value is not None}
    return [r for r in report.runs if r.name in chosen and r.name not in scored and _ended(r)]


def _ended(run: rep.RunRecord) -> bool:
    """The run has an outcome: it did not merely not start, or not finish yet."""
    return run.state not in (RunState.PENDING, RunState.RUNNING) or run.pruned is not None


def _key(values: Mapping[str, object], keys: Sequence[str]) -> tuple[str, ...]:
    """A run's non-seed values, compared as grouping compares them (``groups._buckets``)."""
    return tuple(repr(values.get(p)) for p in keys)


def _why(run: rep.RunRecord) -> str:
    """Why a run has no value: its state, or (finished) why its metric is missing."""
    if run.pruned is not None:
        return "pruned"
    if run.state_word != "finished":
        return run.state_word
    return run.score.missing or "finished without a value"


def sentences(lost: Mapping[str, Sequence[str]], sizes: Mapping[str, int]) -> list[str]:
    """One sentence per group that lost runs: how many of its runs the statistics use, which were
    left out and why, and what that can do to its verdict. ``sizes``: each group's runs with a value."""
    return [_sentence(name, runs, sizes.get(name, 0)) for name, runs in lost.items()]


def _sentence(name: str, runs: Sequence[str], used: int) -> str:
    listed = ", ".join(runs[:MAX_LISTED]) + (", ..." if len(runs) > MAX_LISTED else "")
    if name == ABSENT:
        return (
            f"{len(runs)} runs belong to configurations none of whose runs has a value, so those "
            f"configurations are not in the statistics ({listed}): the ones compared are those that kept "
            "a value; where a pruner or failures removed the others, the survivors are those whose seeds "
            "went well"
        )
    return (
        f"{name}: the statistics use {used} of its {used + len(runs)} runs; {len(runs)} "
        f"{'has' if len(runs) == 1 else 'have'} no value ({listed}): where the runs were lost to "
        "the configuration itself (a crash, a divergence) the survivors are its better seeds, so "
        "its mean, and any verdict involving it, can read better than the configuration is"
    )
