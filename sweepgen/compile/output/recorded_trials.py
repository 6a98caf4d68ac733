"""The trials a search sweep's lock already holds, read back as variants: what the pipeline renders
again beside the newly asked ones."""

from __future__ import annotations

import os
from typing import Any

from sweepgen.compile.output.lockfile import lock
from sweepgen.compile.spec.model import Spec
from sweepgen.compile.spec.sampling.sample import Distribution
from sweepgen.compile.spec.variants.expand import Variant
from sweepgen.compile.spec.variants.trials import AXIS_LAYER, SEED_LAYER, block, trial_variant
from sweepgen.errors import SpecError


def recorded(spec: Spec, out_root: str) -> list[Variant]:
    """The trials the sweep's lock holds, as variants again (in lock order)."""
    sweep_dir = os.path.join(out_root, spec.name)
    current = lock.read(sweep_dir, sweep_dir)
    if current is None:
        return []
    search = block(spec)
    variants = []
    for entry in current.files:
        values = _set_by(entry, AXIS_LAYER)
        seeds = list(_set_by(entry, SEED_LAYER).values())
        _check_axes(spec, entry.variant, values, search.axes, sweep_dir)
        variants.append(trial_variant(spec, entry.variant, values, seeds[0] if seeds else None))
    return variants


def _set_by(entry: lock.LockFile, layer: str) -> dict[str, Any]:
    """The values a lock entry records as set by ``layer``, by path."""
    return {p: entry.set[p] for p, by in entry.layers.items() if by == layer and p in entry.set}


def _check_axes(
    spec: Spec, trial: str, values: dict[str, Any], axes: dict[str, Distribution], sweep_dir: str
) -> None:
    """A recorded trial was searched over the spec's axes, each value inside its axis."""
    if set(values) != set(axes):
        raise SpecError(
            f"trial {trial!r} in {lock.LOCK_NAME} was searched over "
            f"{', '.join(sorted(values)) or 'no axis'}, the spec now over {', '.join(axes)}",
            location=spec.loc(("search", "axes")),
            hint=f"a changed search is a new study: move {sweep_dir} away (or rename the sweep), "
            "then render again",
        )
    for path, value in values.items():
        if not _inside(axes[path], value):
            raise SpecError(
                f"trial {trial!r} in {lock.LOCK_NAME} has {path} = {value!r}, outside the "
                f"axis the spec now gives it",
                location=spec.loc(("search", "axes", path), key=True),
                key=f"search.axes.{path}",
                hint="the study's trials were drawn from the old axis: changing it would corrupt the "
                "study; restore it, or start a new study under a new `name:` (a new sweep folder "
                "and run directories)",
            )


def _inside(dist: Distribution, value: object) -> bool:
    """Whether a recorded trial's value could have been drawn from ``dist`` (its kind and bounds)."""
    if dist.choice is not None:
        return any(type(value) is type(c) and value == c for c in dist.choice)
    if dist.int_uniform is not None:
        lo, hi = dist.int_uniform
        return type(value) is int and lo <= value <= hi
    bounds = dist.uniform if dist.uniform is not None else dist.log_uniform
    assert bounds is not None
    return type(value) is float and bounds[0] <= value <= bounds[1]
