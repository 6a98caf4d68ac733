"""The public functions: what the CLI calls and what other parts (diff, run, report) may call.

Keep these signatures stable; other modules of sweepgen depend on them.
"""

from __future__ import annotations

import difflib
from typing import Any

from sweepgen.errors import Location, SpecError
from sweepgen.expand import Expansion, expand
from sweepgen.spec import load_spec


def load_and_expand(spec_path: str) -> Expansion:
    """Load a spec and expand it into resolved variants (no validation, no rendering)."""
    return expand(load_spec(spec_path))


def resolve_variant(spec_path: str, variant_name: str) -> dict[str, Any]:
    """The resolved config of one variant of a spec, e.g. for ``sweepgen diff spec.yaml:name``.

    The returned mapping shares structure with other variants; copy it before mutating it.
    """
    expansion = load_and_expand(spec_path)
    variant = expansion.by_name(variant_name)
    if variant is None:
        names = [v.name for v in expansion.variants]
        close = difflib.get_close_matches(variant_name, names, n=1)
        hint = f"did you mean `{close[0]}`?" if close else "variants: " + ", ".join(names[:20]) + (
            ", ..." if len(names) > 20 else "")
        raise SpecError(f"spec has no variant named {variant_name!r}",
                        location=Location(expansion.spec.path), hint=hint + " (`sweepgen list SPEC` shows them)")
    return variant.config
