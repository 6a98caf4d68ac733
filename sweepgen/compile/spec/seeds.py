"""The spec's ``seed:`` key: which config path is the random seed, and an optional held-out split.

``seed: training.seed`` names the path; ``seed: {path: training.seed, tune: [1, 2], test: [3, 4]}``
also splits the seeds, so ``report --seeds tune`` chooses among arms and ``report --seeds test``
confirms the choice on runs it never looked at. Runs that differ only in this path are one group in
``report``'s statistics. The lock records the block (with ``sample:``'s ``digits``) under ``report``.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from sweepgen import paths
from sweepgen.errors import Location, SpecError

if TYPE_CHECKING:
    from sweepgen.compile.spec.model import Spec, SpecModel


class SeedBlock(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    path: StrictStr = Field(description="dotted path of the seed in the resolved config")
    tune: list[Any] | None = Field(default=None, description="seeds used to choose (report --seeds tune)")
    test: list[Any] | None = Field(
        default=None, description="held-out seeds used to confirm (report --seeds test)"
    )


def report_block(spec: Spec, variant_configs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The lock's ``report`` entry: the seed block checked against the variants, ``digits`` and the
    naming scheme (``names``, when readable)."""
    model = spec.model
    declared = model.seed
    block = _naming_entries(model)
    if declared is None:
        return block or None
    seed = SeedBlock(path=declared) if isinstance(declared, str) else declared
    where = spec.doc.loc(("seed",) if isinstance(declared, str) else ("seed", "path"))
    found = _seeds_of(spec, seed.path, variant_configs, where)
    block["seed"] = seed.path
    if seed.tune is not None or seed.test is not None:
        block["tune"], block["test"] = _split(spec, seed, found)
    return block


def _naming_entries(model: SpecModel) -> dict[str, Any]:
    """``digits`` and ``names``, which `report` needs to name runs as the compiler did."""
    block: dict[str, Any] = {}
    if model.sample is not None:
        block["digits"] = model.sample.digits
    if model.names != "legacy":  # recorded only when not the default: older locks stay byte-identical
        block["names"] = model.names
    return block


def _seeds_of(spec: Spec, path: str, variant_configs: list[dict[str, Any]], where: Location) -> list[Any]:
    """Each variant's seed; a path some variant's config lacks is an error at ``where``."""
    found = [paths.get(c, path) for c in variant_configs]
    if any(v is paths.MISSING for v in found):
        close = difflib.get_close_matches(path, paths.all_paths(spec.base), n=1)
        raise SpecError(
            f"the seed path `{path}` is not in every variant's config",
            location=where,
            hint=f"did you mean `{close[0]}`?" if close else "name a dotted path of the resolved config",
        )
    return found


def _split(spec: Spec, seed: SeedBlock, found: list[Any]) -> tuple[list[Any], list[Any]]:
    """The tune and test seeds: both given, disjoint, and each a seed some variant runs."""
    tune, test = seed.tune or [], seed.test or []
    problem = _split_problem(tune, test, found)
    if problem is not None:
        raise SpecError(
            f"seed split: {problem}",
            location=spec.doc.loc(("seed",)),
            hint="tune and test are disjoint lists of seed values the sweep runs",
        )
    return tune, test


def _split_problem(tune: list[Any], test: list[Any], found: list[Any]) -> str | None:
    both = [v for v in tune if v in test]
    if both:
        return f"seeds {both} are in both tune and test"
    unused = [v for v in tune + test if v not in found]
    if unused:
        return f"seeds {unused} are in no variant"
    return "give both tune and test" if not tune or not test else None
