"""A search sweep's trials as variants: each asked point is a variant of the base whose only
differences are the search axes (layer ``search``) and, with ``repeats``, the seed (``search:seed``).

Trials go through the same stages as any variant (derive, gate, constraints, schema, render); the
trials already recorded in the sweep's lock are rendered again by ``render`` and ``check``, so a
trial file is a generated file like any other: stale, hand-edited or orphaned is told the same way.
At render time ``probe`` validates the space itself, before any trial exists: the schema at the
bounds and at seeded sample points; the constraints must admit at least one of those points.
"""

from __future__ import annotations

import random
from typing import Any

from sweepgen import paths
from sweepgen.compile.spec import overrides
from sweepgen.compile.spec.model import Spec
from sweepgen.compile.spec.sampling import sample as sampling
from sweepgen.compile.spec.sampling.search_block import SearchBlock
from sweepgen.compile.spec.variants.expand import Expansion, Variant
from sweepgen.errors import Location, SpecError, ValidationError

AXIS_LAYER = "search"
SEED_LAYER = "search:seed"
PROBE_SAMPLES = 8  # seeded interior points probed at render time, besides the bounds
PROBE_CHOICES = 64  # interior values of one `choice` axis probed at most (spread evenly)
_TOP = 1.0 - 1e-12  # the unit coordinate of an axis' upper bound (value_at takes u in [0, 1))
_EXCLUSIVE = ("variants", "grid", "zip", "sample", "ablation")


def block(spec: Spec) -> SearchBlock:
    assert spec.model.search is not None  # callers check is_search first
    return spec.model.search


def is_search(spec: Spec) -> bool:
    return spec.model.search is not None


def trial_name(number: int, repeat: int | None = None) -> str:
    """``t0007``, or ``t0007_r1`` for the second seed of a trial with ``repeats``."""
    return f"t{number:04d}" + (f"_r{repeat}" if repeat is not None else "")


def check_block(spec: Spec) -> None:
    """What pydantic cannot see: the search stands alone, its paths exist, repeats has a seed."""
    search = block(spec)
    for key in _EXCLUSIVE:
        if getattr(spec.model, key) is not None:
            raise SpecError(
                f"a spec with `search:` cannot also have `{key}:`",
                location=spec.loc((key,), key=True),
                hint="a search sweep's trials are the only variants; put the axis in `search.axes`, "
                "or keep the grid in a separate spec",
            )
    for key, dist in search.axes.items():
        _check_axis(key, dist, spec.loc(("search", "axes", key), key=True))
    ops = _axis_ops(spec)
    _check_derived(spec, ops)
    if search.repeats > 1:
        _check_repeats(spec, search)
    overrides.check_types(spec.base, ops, "the search")
    overrides.apply_all(spec.base, ops, {}, where="the search")  # a missing path: its closest match


def _check_axis(key: str, dist: sampling.Distribution, loc: Location) -> None:
    """A search axis sets an existing path, and a categorical one chooses between JSON scalars."""
    kind, _path = overrides.split_key(key, loc)
    if kind != overrides.SET:
        raise SpecError(
            f"search axis {key!r} must name an existing path (no `+` or `~`)",
            location=loc,
            hint="add the key to the base, then search over it",
        )
    bad = [v for v in dist.choice or [] if v is not None and not isinstance(v, (bool, int, float, str))]
    if bad:
        raise SpecError(
            f"search axis {key!r}: a choice must be a number, string, bool or null, got {bad[0]!r}",
            location=loc,
            hint="Optuna stores categorical values as JSON scalars; choose between scalars",
        )


def _check_repeats(spec: Spec, search: SearchBlock) -> None:
    """Repeated trials need the config's seed: an int in the base, and not itself an axis."""
    if search.seed_path is None:
        raise SpecError(
            "`search.repeats` needs `search.seed_path`, the config's seed",
            location=spec.loc(("search", "repeats")),
            hint="e.g. seed_path: training.seed",
        )
    seed = paths.get(spec.base, search.seed_path)
    if type(seed) is not int:
        raise SpecError(
            f"`search.seed_path` {search.seed_path!r} must name an int in the base, got "
            f"{'nothing' if seed is paths.MISSING else repr(seed)}",
            location=spec.loc(("search", "seed_path")),
            hint="name the seed the trainer reads, e.g. training.seed",
        )
    if search.seed_path in search.axes:
        raise SpecError(
            "`search.seed_path` is also a search axis",
            location=spec.loc(("search", "seed_path")),
            hint="search over the seed or repeat it, not both",
        )


def _check_derived(spec: Spec, ops: list[overrides.Op]) -> None:
    """A `derived:` value at (or around, or inside) an axis would replace the point Optuna asked
    for: the study would learn from a value that never ran."""
    for key in spec.model.derived or {}:
        loc = spec.loc(("derived", key), key=True)
        _, path = overrides.split_key(key, loc)
        for op in ops:
            shorter = min(len(path), len(op.path))
            if path[:shorter] == op.path[:shorter]:
                raise SpecError(
                    f"`derived:` key {key!r} sets the search axis {op.dotted!r}"
                    + ("" if path == op.path else " (or a value around or inside it)"),
                    location=loc,
                    key=f"derived.{key}",
                    hint="the study asks each trial's value of an axis and learns from it: derive "
                    "another key from the axis (e.g. a scaled copy) instead of replacing it",
                )


def _axis_ops(spec: Spec, values: dict[str, Any] | None = None) -> list[overrides.Op]:
    """One SET op per axis, holding ``values[path]`` (default: the low bound, for shape checks)."""
    ops = []
    for key, dist in block(spec).axes.items():
        loc = spec.loc(("search", "axes", key), key=True)
        _, path = overrides.split_key(key, loc)
        value = values[key] if values is not None else sampling.value_at(dist, 0.0)
        ops.append(overrides.Op(overrides.SET, path, value, loc, AXIS_LAYER))
    return ops


def trial_variant(spec: Spec, name: str, values: dict[str, Any], seed: int | None = None) -> Variant:
    """The variant of one trial: the base with the axes at ``values`` (and the repeat's seed)."""
    ops = _axis_ops(spec, values)
    search = block(spec)
    if seed is not None and search.seed_path is not None:
        loc = spec.loc(("search", "seed_path"))
        ops.append(overrides.Op(overrides.SET, tuple(search.seed_path.split(".")), seed, loc, SEED_LAYER))
    config, layers = overrides.apply_all(spec.base, ops, {}, where=f"trial {name}")
    return Variant(
        name=name,
        config=config,
        layers=layers,
        overrides={op.dotted: op.value for op in ops},
        axes={op.dotted: op.value for op in ops},
        step=None,
        touched=tuple(op.path for op in ops),
        parts={"search": name},
    )


def _repeat_seeds(spec: Spec) -> list[int | None]:
    """The seed of each repeat: the base's seed, +1, +2, ...; ``[None]`` without repeats."""
    search = block(spec)
    if search.repeats == 1 or search.seed_path is None:
        return [None]
    first = paths.get(spec.base, search.seed_path)
    return [first + i for i in range(search.repeats)]


def trial_variants(spec: Spec, number: int, values: dict[str, Any]) -> list[Variant]:
    """Every run of trial ``number``: one, or one per repeat seed."""
    seeds = _repeat_seeds(spec)
    if seeds == [None]:
        return [trial_variant(spec, trial_name(number), values)]
    return [trial_variant(spec, trial_name(number, i), values, seed) for i, seed in enumerate(seeds)]


def expansion_of(spec: Spec, variants: list[Variant]) -> Expansion:
    """The trials as an expansion; errors about an axis (or the repeat seed) point at its key."""
    locs = {(op.layer, op.dotted): op.loc for op in _axis_ops(spec)}
    search = block(spec)
    if search.seed_path is not None:
        locs[(SEED_LAYER, search.seed_path)] = spec.loc(("search", "seed_path"))
    return Expansion(spec=spec, variants=variants, implicit=frozenset(search.axes), locs=locs)


def probe_points(spec: Spec) -> list[tuple[str, dict[str, Any]]]:
    """The points ``render`` validates: every axis at each bound (others at their low bound), all
    axes high, and ``PROBE_SAMPLES`` seeded points inside the space."""
    axes = block(spec).axes
    low = {k: sampling.value_at(d, 0.0) for k, d in axes.items()}
    points = [
        ("the low bounds", low),
        ("the high bounds", {k: sampling.value_at(d, _TOP) for k, d in axes.items()}),
    ]
    for key, dist in axes.items():
        points.append((f"{key} at its high bound", {**low, key: sampling.value_at(dist, _TOP)}))
        if dist.choice is not None:
            points += [(f"{key} = {v!r}", {**low, key: v}) for v in _probed_choices(dist.choice)]
    rng = random.Random(block(spec).seed)
    for i in range(PROBE_SAMPLES):
        points.append(
            (f"sample point {i + 1}", {k: sampling.value_at(d, rng.random()) for k, d in axes.items()})
        )
    return points


def _probed_choices(choice: list[Any]) -> list[Any]:
    """The interior values of a ``choice`` axis that are probed: all of them up to
    ``PROBE_CHOICES``, else that many spread evenly, so a choice of 100,000 values probes in a
    second, not an hour. Every trial is still validated, by the same stages, when it is asked."""
    inner = choice[1:-1]
    if len(inner) <= PROBE_CHOICES:
        return inner
    step = len(inner) / PROBE_CHOICES
    return [inner[int(i * step)] for i in range(PROBE_CHOICES)]


def too_tight(spec: Spec, failures: list[tuple[str, ValidationError]], probed: int) -> ValidationError:
    """The error when no probed point satisfies the constraints: the search could only fail."""
    where, err = failures[0]
    return ValidationError(
        f"no probed point of the search satisfies the constraints ({probed} probed); "
        f"at {where}: {err.message}",
        location=err.location or Location(spec.path),
        key=err.key,
        hint="every trial would be told as failed: widen the axes or fix the constraint",
    )
