"""The spec's ``choices:``: allowed values per dotted path, checked in every variant like a schema.

For the string options a trainer types as ``str`` (``loss_type``, ``scale_rewards``) when no schema
file lists them: ``choices: {trainer.loss_type: [grpo, dr_grpo, dapo]}``. A path that no variant's
config has is an error (a misspelled path would check nothing); a variant without the key is not.
"""

from __future__ import annotations

import difflib
from typing import Any

from sweepgen import paths
from sweepgen.compile.schema.jsonschema_subset import same
from sweepgen.compile.spec.variants.expand import Expansion, Variant
from sweepgen.compile.spec.variants.gate import layer_of, show_value
from sweepgen.errors import Location, SpecError, ValidationError


def check_choices(expansion: Expansion) -> None:
    spec = expansion.spec
    for path, allowed in (spec.model.choices or {}).items():
        where = spec.loc(("choices", path), key=True)
        if not allowed:
            raise SpecError(f"choices for `{path}` is empty", location=where, hint="list the allowed values")
        present = [_check_variant(expansion, variant, path, allowed, where) for variant in expansion.variants]
        if not any(present):
            close = difflib.get_close_matches(path, paths.all_paths(spec.base), n=1)
            raise SpecError(
                f"choices names `{path}`, which no variant's config has",
                location=where,
                hint=f"did you mean `{close[0]}`?" if close else "name a dotted path of the config",
            )


def _check_variant(
    expansion: Expansion, variant: Variant, path: str, allowed: list[Any], where: Location
) -> bool:
    """A variant's value at ``path`` is one of ``allowed``; False when its config has no such path."""
    value = paths.get(variant.config, path)
    if value is paths.MISSING:
        return False
    if not any(same(value, a) for a in allowed):
        layer = layer_of(variant, path)
        raise ValidationError(
            f"variant {variant.name!r}: `{path}` is {show_value(value)} (set by {layer}), "
            f"not one of the choices {allowed!r}",
            location=expansion.where(layer, path) or where,
            key=path,
            hint="fix the value, or add it to `choices:` if it is allowed",
        )
    return True
