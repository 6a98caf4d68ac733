"""Validation of every resolved variant: the allowed-diff gate, constraints, and the schema.

The gate compares each variant with the base only under the paths its overrides touched (all else
is shared by reference), so it is O(variants x overrides), not O(variants x leaves) and never a
deepdiff per variant. deepdiff stays the reference: it explains a violation to the user, and a
property test holds the fast gate and deepdiff to the same answer.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from sweepgen import paths
from sweepgen.errors import SpecError, ValidationError
from sweepgen.expand import Expansion, Variant
from sweepgen.sandbox import make_env

MAX_LISTED = 5  # violations listed in one message; the count of the rest follows


def context(config: dict, variant: dict, sweep: dict) -> dict[str, Any]:
    """What templates and constraints see: the config's top-level keys plus three of our own."""
    ctx = dict(config)
    ctx["config"] = config
    ctx["variant"] = variant
    ctx["sweep"] = sweep
    return ctx


def layer_of(variant: Variant, path: str) -> str:
    """The layer that set ``path`` (or the closest enclosing overridden path) in this variant."""
    parts = path.split(".")
    while parts:
        layer = variant.layers.get(".".join(parts))
        if layer is not None:
            return layer
        parts.pop()
    return "base"


def implicitly_allowed(layer: str) -> bool:
    """Differences set by grid, zip, derived or an ablation step need no `allow` entry."""
    return layer in ("grid", "zip", "derived") or layer.startswith("ablation:")


def check_gate(expansion: Expansion) -> None:
    """Reject differences from the base that are neither allowed nor set by grid/zip/ablation/derived."""
    spec = expansion.spec
    base = spec.base
    allow = tuple(spec.model.allow)
    bad: list[tuple[Variant, str]] = []
    for variant in expansion.variants:
        for path in sorted(paths.diff_at(base, variant.config, variant.touched)):
            # Decided per variant by the layer that last set the path: a named variant changing a
            # path that some axis also varies (in other variants) still needs `allow`.
            if not implicitly_allowed(layer_of(variant, path)) and not paths.matches(path, allow):
                bad.append((variant, path))
    if not bad:
        return
    variant, path = bad[0]
    layer = layer_of(variant, path)
    old, new = paths.get(base, path), paths.get(variant.config, path)
    others = sorted({v.name for v, p in bad if p == path and v is not variant})
    also = f" (also in {len(others)} other variant(s): {', '.join(others[:MAX_LISTED])}" \
           f"{', ...' if len(others) > MAX_LISTED else ''})" if others else ""
    more_paths = sorted({p for _, p in bad} - {path})
    more = f"; other disallowed paths: {', '.join(more_paths[:MAX_LISTED])}" + (
        ", ..." if len(more_paths) > MAX_LISTED else "") if more_paths else ""
    raise ValidationError(
        f"variant {variant.name!r} differs from the base at `{path}`: {_show(old)} -> {_show(new)}, "
        f"set by {layer}; this path is not in `allow`{also}{more}. deepdiff: {explain(base, variant.config, path)}",
        location=spec.where(layer, path) or spec.loc(("allow",)), key=path,
        hint=f"if the difference is intended, add `{path}` (or a glob covering it) to `allow`; otherwise "
             "remove the override so the comparison changes one thing at a time")


def _show(value: Any) -> str:
    if value is paths.MISSING:
        return "(absent)"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def explain(base: dict, config: dict, path: str) -> str:
    """deepdiff's own account of the change at ``path`` (the reference the gate must agree with).

    Compared from the parent mapping, so a key that was added or removed reads as such.
    """
    from deepdiff import DeepDiff

    parent, _, key = path.rpartition(".")
    old = paths.get(base, parent) if parent else base
    new = paths.get(config, parent) if parent else config
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    report = DeepDiff(old, new, include_paths=[f"root[{key!r}]"], verbose_level=2,
                      threshold_to_diff_deeper=0, ignore_private_variables=False).pretty()

    def dotted(match: re.Match[str]) -> str:  # root['a']['b'] -> parent.a.b
        keys = re.findall(r"\['((?:[^'\\]|\\.)*)'\]", match.group(0))
        return ".".join([parent] * bool(parent) + keys)

    return re.sub(r"root(?:\['(?:[^'\\]|\\.)*'\])+", dotted, report).replace("\n", "; ") or "no difference"


_NAME = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def check_constraints(expansion: Expansion, sweep: dict) -> None:
    """Each constraint must evaluate to ``true`` for every variant, in the sandbox."""
    spec = expansion.spec
    if not spec.model.constraints:
        return
    from jinja2 import TemplateSyntaxError, Undefined

    env = make_env()
    compiled: list[tuple[Callable[..., Any], Any, int]] = []
    for i, constraint in enumerate(spec.model.constraints):
        loc = spec.loc(("constraints", i, "expr"))
        try:
            compiled.append((env.compile_expression(constraint.expr, undefined_to_none=False), constraint, i))
        except TemplateSyntaxError as err:
            raise SpecError(f"constraint is not a valid expression: {err.message}", location=loc,
                            hint="write a Jinja expression, e.g. `a.b == c.d`") from None
    for variant in expansion.variants:
        ctx = context(variant.config, variant.context_view(), sweep)
        for func, constraint, i in compiled:
            loc = spec.loc(("constraints", i, "expr"))
            try:
                result = func(**ctx)
                if isinstance(result, Undefined):  # `x.missing` alone returns an undefined, not an error
                    result._fail_with_undefined_error()
            except Exception as err:  # noqa: BLE001 - any failure inside user expressions is user error
                raise ValidationError(
                    f"constraint `{constraint.expr}` cannot be evaluated for variant {variant.name!r}: "
                    f"{type(err).__name__}: {err}", location=loc,
                    hint="names are the config's top-level keys, `config`, `variant` and `sweep`") from None
            if result is True:
                continue
            if result is not False:
                raise ValidationError(
                    f"constraint `{constraint.expr}` gave {result!r} for variant {variant.name!r}, "
                    "not true/false", location=loc, hint="write a comparison, e.g. `x == y`")
            values = _values_in(constraint.expr, variant)
            raise ValidationError(
                f"constraint failed for variant {variant.name!r}: {constraint.message} "
                f"(`{constraint.expr}`{'; ' + values if values else ''})", location=loc,
                hint="fix the variant's overrides or the base so the rule holds")


def _values_in(expr: str, variant: Variant) -> str:
    """``a.b = 4 (base), c.d = 8 (set by grid)`` for the dotted names an expression mentions."""
    shown = []
    for name in dict.fromkeys(_NAME.findall(expr)):
        value = paths.get(variant.config, name)
        if value is paths.MISSING:
            continue
        shown.append(f"{name} = {value!r} ({layer_of(variant, name)})")
    return ", ".join(shown)


def check_schema(expansion: Expansion, validator: Callable[[dict], list[tuple[str, str]]] | None) -> None:
    """Validate every variant's config with the spec's schema (pydantic model or JSON Schema)."""
    if validator is None:
        return
    spec = expansion.spec
    for variant in expansion.variants:
        problems = validator(variant.config)
        if not problems:
            continue
        path, message = problems[0]
        layer = layer_of(variant, path) if path else "base"
        value = paths.get(variant.config, path) if path else paths.MISSING
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        where = spec.where(layer, path) if path else None
        raise ValidationError(
            f"variant {variant.name!r} does not match schema {spec.model.schema_}: "
            f"`{path or '<root>'}`: {message}"
            + (f", got {_show(value)} (set by {layer})" if value is not paths.MISSING else "") + more,
            location=where or spec.loc(("schema",)), key=path or None,
            hint="fix the value in the spec, or the schema if it is wrong")
