"""What templates, constraints and derived values see of a variant: its config and three names of ours."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sweepgen.compile.spec.model import Spec


def context(config: dict[str, Any], variant: dict[str, Any], sweep: dict[str, Any]) -> dict[str, Any]:
    """What templates and constraints see: the config's top-level keys plus three of our own."""
    ctx = dict(config)
    ctx["config"] = config
    ctx["variant"] = variant
    ctx["sweep"] = sweep
    return ctx


def sweep_view(spec: Spec, spec_rel: str) -> dict[str, Any]:
    """``sweep`` as templates, constraints and derived values see it."""
    return {"name": spec.name, "spec": spec_rel, "description": spec.model.description}
