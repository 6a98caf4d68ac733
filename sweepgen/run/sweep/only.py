"""`--only NAME` takes a seed group's name as well as a run's or a variant's: the one naming scheme
(docs/SPEC.md, `names`) in which a group is its runs' name without the seed part, so the name a
`report` table shows selects that group's runs in `run`, `status` and `cancel`.

Groups are formed as `report` forms them (sweepgen.run.report.groups), over every run of the sweep.
A run or variant name always means that run: a group name is looked up only for names that are
neither, and a name that is none of the three is left for ``select`` to refuse with the closest names.
"""

from __future__ import annotations

from collections.abc import Sequence

from sweepgen.run.core.plan.tasks import NAMING_PATHS, Sweep, only_names, run_names
from sweepgen.run.report import groups as grp


def with_groups(sweep: Sweep, only: Sequence[str]) -> list[str]:
    """``only`` with each seed group's name replaced by its runs' names."""
    wanted = only_names(only)
    known = run_names(sweep.tasks)
    if all(n in known for n in wanted):
        return list(only)  # nothing to look up (and `--only ""` stays select's error)
    groups = _seed_groups(sweep)
    if groups is None:
        return list(only)
    out: list[str] = []
    for name in wanted:
        out += list(groups[name]) if name not in known and name in groups else [name]
    return out


def _seed_groups(sweep: Sweep) -> dict[str, Sequence[str]] | None:
    """Each seed group's name and its runs' names (grouped as `report` groups them); None for a
    sweep without a seed path."""
    varying = [p for p in sweep.lock.varying if p not in NAMING_PATHS]
    plan = grp.seed_plan(sweep.lock.report, varying)
    if plan.path is None:
        return None
    members = [grp.Member(t.name, t.variant, t.values) for t in sweep.tasks]
    return {g.name: g.members for g in grp.group(members, plan, varying, sweep.name)}
