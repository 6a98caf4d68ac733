"""Seed groups: the runs that differ only in the seed, and the names a comparison calls them by.

The one seed rule, used by grouping, statistics and curves alike: the seed path comes from the spec
(``seed: training.seed`` or ``seed: {path: ..., tune: [...], test: [...]}``, recorded in the lock);
without it, the one varying path whose last part is exactly ``seed`` is taken, and the report says it
inferred it (``data_seed`` is a parameter like any other: name it in the spec if it is the seed).

A group is named by its runs' variant name with the seed's part removed (``lo_seed3`` -> ``lo``,
``x-seed1`` -> ``x``, ``top5_wide_s2`` -> ``top5_wide``); where that leaves nothing or two groups the
same name, by its values (``lr=0.01``); by the sweep's name only when it is the sweep's one group.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweepgen.errors import UserError

INFERRED_SEED = re.compile(r"(^|\.)seed$")
SEED_SETS = ("all", "tune", "test")


@dataclass(frozen=True)
class SeedPlan:
    """Which path is the seed, where that came from, and the held-out split (if the spec has one)."""

    path: str | None
    source: str  # "spec" | "inferred" | "none"
    tune: tuple[Any, ...] | None = None
    test: tuple[Any, ...] | None = None

    @property
    def note(self) -> str | None:
        if self.source == "inferred":
            return (
                f"seed path inferred: `{self.path}` (runs that differ only in it are one group); "
                f"name it in the spec with `seed: {self.path}` to make it explicit"
            )
        if self.source == "none":
            return (
                "no seed path (the spec names none and no varying path is called `seed`): "
                "every run is its own group"
            )
        return None


@dataclass(frozen=True)
class Member:
    run: str
    variant: str
    values: Mapping[str, Any]


@dataclass(frozen=True)
class Group:
    name: str
    members: tuple[str, ...]  # run names
    values: Mapping[str, Any]  # the group's non-seed varying values


def seed_plan(declared: Mapping[str, Any] | None, varying: Sequence[str]) -> SeedPlan:
    """The declared seed (from the lock's ``report`` block), or the one varying path named ``seed``."""
    if declared and declared.get("seed"):
        tune, test = declared.get("tune"), declared.get("test")
        return SeedPlan(
            str(declared["seed"]),
            "spec",
            tuple(tune) if tune is not None else None,
            tuple(test) if test is not None else None,
        )
    named = [p for p in varying if INFERRED_SEED.search(p)]
    if len(named) == 1:
        return SeedPlan(named[0], "inferred")
    return SeedPlan(None, "none")


def select_seeds(members: Sequence[Member], plan: SeedPlan, which: str) -> list[Member]:
    """The members whose seed is in the ``tune`` or ``test`` set (``all``: every member)."""
    if which == "all":
        return list(members)
    chosen = plan.tune if which == "tune" else plan.test
    if chosen is None or plan.path is None:
        raise UserError(
            f"--seeds {which} needs the spec to split its seeds into tune and test sets",
            hint="add e.g. `seed: {path: training.seed, tune: [1, 2, 3], test: [4, 5, 6]}` to the spec, "
            "render it, and run the test seeds",
        )
    wanted = {repr(v) for v in chosen}
    return [m for m in members if repr(m.values.get(plan.path)) in wanted]


def group(members: Sequence[Member], plan: SeedPlan, varying: Sequence[str], sweep: str) -> list[Group]:
    """The runs grouped by every varying value but the seed, in first-seen order, each named."""
    keys = [p for p in varying if p != plan.path]
    buckets = _buckets(members, keys)
    if plan.path is None:
        named = [(ms[0].variant, ms) for ms in buckets]
    else:
        named = _named(buckets, members, plan.path, keys, sweep)
    return [Group(n, tuple(m.run for m in ms), _shared(ms, keys)) for n, ms in named]


def _buckets(members: Sequence[Member], keys: Sequence[str]) -> list[list[Member]]:
    """The runs with the same values of ``keys``, together, in first-seen order."""
    buckets: dict[tuple[str, ...], list[Member]] = {}
    for m in members:
        buckets.setdefault(tuple(repr(m.values.get(p)) for p in keys), []).append(m)
    return list(buckets.values())


def _named(
    buckets: list[list[Member]], members: Sequence[Member], path: str, keys: Sequence[str], sweep: str
) -> list[tuple[str, list[Member]]]:
    """Each seed group's name: its variant names without the seed; its values where those collide
    or vanish; the sweep's name for a sweep's one group."""
    seed_token = _seed_positions(members, path)
    named = [(_name(ms[0], path, seed_token), ms) for ms in buckets]
    if _say_nothing([n for n, _ in named]):
        named = [(_values_name(ms[0], keys), ms) for _, ms in named]
    if len(named) == 1 and not named[0][0]:
        named = [(sweep, named[0][1])]  # the sweep's one group: its name is the sweep's
    return named


def _say_nothing(names: list[str]) -> bool:
    """Names that collide (two groups, one name) or vanish (the seed was the whole name) tell the
    groups apart no better than no names: their values must."""
    return len(set(names)) < len(names) or not all(names)


def _shared(members: Sequence[Member], keys: Sequence[str]) -> dict[str, Any]:
    return {p: members[0].values.get(p) for p in keys}


def _values_name(member: Member, keys: Sequence[str]) -> str:
    return ", ".join(f"{p}={member.values[p]}" for p in keys if member.values.get(p) is not None)


def _seed_positions(members: Sequence[Member], path: str) -> int | None:
    """The ``_``-separated position of the variant names that spells the seed: the one position
    whose token and the seed value determine each other (only when every name has the same parts)."""
    tokens = [m.variant.split("_") for m in members]
    if len({len(t) for t in tokens}) != 1:
        return None
    seeds = [repr(m.values.get(path)) for m in members]
    if len(set(seeds)) < 2:
        return None
    return next((i for i in range(len(tokens[0])) if _spells(tokens, seeds, i)), None)


def _spells(tokens: Sequence[Sequence[str]], seeds: Sequence[str], i: int) -> bool:
    """The names' ``i``-th tokens and the seeds determine each other (one to one)."""
    pairs = {(t[i], s) for t, s in zip(tokens, seeds)}
    return len({t for t, _ in pairs}) == len(pairs) == len({s for _, s in pairs})


def _name(member: Member, path: str, position: int | None) -> str:
    """The variant name without the part that spells the seed: ``seed3`` / ``s3`` / ``seed-3`` after a
    ``_``, ``-`` or ``.`` (or at the start), else the ``_``-part the seed determines, else a bare ``3``."""
    seed = re.escape(str(member.values.get(path)))
    spelled = re.compile(rf"(^|[_\-.])(seed|s)[-=]?{seed}(?=$|[_\-.])")
    for match in reversed(list(spelled.finditer(member.variant))):
        return _joined(member.variant[: match.start()], member.variant[match.end() :])
    parts = member.variant.split("_")
    if position is not None:
        del parts[position]
        return "_".join(parts)
    bare = [i for i, p in enumerate(parts) if p == str(member.values.get(path))]
    if bare:
        del parts[bare[-1]]
    return "_".join(parts)


def _joined(before: str, after: str) -> str:
    """``before`` and ``after`` the removed seed part, with one separator between them."""
    return before + after if before and after else (before or after.lstrip("_-."))
