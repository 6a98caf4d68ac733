"""The trials a search sweep's lock already holds, read back as variants: what the pipeline renders
again beside the newly asked ones."""

from __future__ import annotations

import os

from sweepgen.compile.output import lock
from sweepgen.compile.spec.expand import Variant
from sweepgen.compile.spec.model import Spec
from sweepgen.compile.spec.trials import AXIS_LAYER, SEED_LAYER, block, trial_variant
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
        values = {
            p: entry.set[p] for p, layer in entry.layers.items() if layer == AXIS_LAYER and p in entry.set
        }
        seeds = [entry.set[p] for p, layer in entry.layers.items() if layer == SEED_LAYER and p in entry.set]
        if set(values) != set(search.axes):
            raise SpecError(
                f"trial {entry.variant!r} in {lock.LOCK_NAME} was searched over "
                f"{', '.join(sorted(values)) or 'no axis'}, the spec now over {', '.join(search.axes)}",
                location=spec.loc(("search", "axes")),
                hint=f"a changed search is a new study: move {sweep_dir} away (or rename the sweep), "
                "then render again",
            )
        variants.append(trial_variant(spec, entry.variant, values, seeds[0] if seeds else None))
    return variants
