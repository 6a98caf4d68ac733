"""The allowed-diff gate: every variant differs from the base only where the spec allows it.

The gate compares each variant with the base only under the paths its overrides touched (all else
is shared by reference), so it is O(variants x overrides), not O(variants x leaves) and never a
deepdiff per variant. deepdiff stays the reference: it explains a violation to the user, and a
property test holds the fast gate and deepdiff to the same answer.
"""

from __future__ import annotations

import re
from typing import Any

from sweepgen import globs, paths
from sweepgen.compile.spec.variants.expand import Expansion, Variant
from sweepgen.compile.template.sandbox import check_total, total_bounded
from sweepgen.errors import ValidationError

MAX_LISTED = 5  # violations listed in one message; the count of the rest follows


def layer_of(variant: Variant, path: str) -> str:
    """The layer that set ``path`` (or the closest enclosing overridden path) in this variant."""
    layer = variant.layers.get(path)  # the common case, looked up before any splitting
    if layer is not None:
        return layer
    parts = path.split(".")
    while parts:
        layer = variant.layers.get(".".join(parts))
        if layer is not None:
            return layer
        parts.pop()
    return "base"


def _implicitly_allowed(layer: str) -> bool:
    """Differences set by grid, zip, sample, derived, an ablation step or a search trial (its axes
    and repeat seed) need no `allow` entry."""
    return layer in ("grid", "zip", "sample", "derived", "search") or layer.startswith(
        ("ablation:", "search:")
    )


def check_gate(expansion: Expansion) -> None:
    """Reject differences from the base that are neither allowed nor set by grid/zip/ablation/derived.
    Bounded by the spec's total time budget: variants x differing paths x `allow` globs is the spec's
    to choose (200 variants of 200 overrides against 50,000 globs ran for hours)."""
    with total_bounded(
        "checking the differences against `allow`",
        expansion.spec.loc(("allow",)),
        "fewer `allow` entries (a `**` glob covers many paths), or fewer overrides per variant",
    ):
        bad = _disallowed(expansion, tuple(globs.compile_glob(p) for p in expansion.spec.model.allow))
    if bad:
        raise _refusal(expansion, bad)


def _disallowed(expansion: Expansion, allow: tuple[globs.Glob, ...]) -> list[tuple[Variant, str]]:
    bad: list[tuple[Variant, str]] = []
    matched: dict[str, bool] = {}  # by path: most variants repeat a few of them
    for variant in expansion.variants:
        for path in expansion.differences(variant):
            # Decided per variant by the layer that last set the path: a named variant changing a
            # path that some axis also varies (in other variants) still needs `allow`.
            if _implicitly_allowed(layer_of(variant, path)):
                continue
            ok = matched.get(path)
            if ok is None:
                check_total()
                tokens = globs.dotted(path)
                ok = matched[path] = any(glob.match(tokens) for glob in allow)
            if not ok:
                bad.append((variant, path))
    return bad


def _refusal(expansion: Expansion, bad: list[tuple[Variant, str]]) -> ValidationError:
    """The first disallowed difference, with the other variants and paths it stands for."""
    spec = expansion.spec
    base = spec.base
    variant, path = bad[0]
    layer = layer_of(variant, path)
    old, new = paths.get(base, path), paths.get(variant.config, path)
    others = sorted({v.name for v, p in bad if p == path and v is not variant})
    also = f" (also in {len(others)} other variant(s): {_listed(others)})" if others else ""
    more_paths = sorted({p for _, p in bad} - {path})
    more = f"; other disallowed paths: {_listed(more_paths)}" if more_paths else ""
    return ValidationError(
        f"variant {variant.name!r} differs from the base at `{path}`: "
        f"{show_value(old)} -> {show_value(new)}, set by {layer}; this path is not in `allow`{also}{more}. "
        f"deepdiff: {_explain(base, variant.config, path)}",
        location=expansion.where(layer, path) or spec.loc(("allow",)),
        key=path,
        hint=f"if the difference is intended, add `{path}` (or a glob covering it) to `allow`; otherwise "
        "remove the override so the comparison changes one thing at a time",
    )


def _listed(names: list[str]) -> str:
    """The first MAX_LISTED of ``names``, and ``...`` for the rest."""
    return ", ".join(names[:MAX_LISTED]) + (", ..." if len(names) > MAX_LISTED else "")


def show_value(value: Any) -> str:
    if value is paths.MISSING:
        return "(absent)"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _explain(base: dict[str, Any], config: dict[str, Any], path: str) -> str:
    """deepdiff's own account of the change at ``path`` (the reference the gate must agree with).

    Compared from the parent mapping, so a key that was added or removed reads as such.
    """
    from deepdiff import DeepDiff  # noqa: PLC0415 - only when the gate fails: deepdiff takes ~0.4 s

    parent, _, key = path.rpartition(".")
    old = paths.get(base, parent) if parent else base
    new = paths.get(config, parent) if parent else config
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    report = DeepDiff(
        old,
        new,
        include_paths=[f"root[{key!r}]"],
        verbose_level=2,
        threshold_to_diff_deeper=0,
        ignore_private_variables=False,
    ).pretty()

    def dotted(match: re.Match[str]) -> str:  # root['a']['b'] -> parent.a.b
        keys = re.findall(r"\['((?:[^'\\]|\\.)*)'\]", match.group(0))
        return ".".join([parent] * bool(parent) + keys)

    return re.sub(r"root(?:\['(?:[^'\\]|\\.)*'\])+", dotted, report).replace("\n", "; ") or "no difference"
