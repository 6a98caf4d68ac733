"""Expansion: named variants x grid x zip x ablation, as plain dict work on a base resolved once.

Layers apply in one fixed order, and each resolved variant remembers which layer set every path it
overrides: base (or an include file) < named variant < grid axes < zip axes < ablation steps
(cumulative: step k applies the ``set`` of steps 1..k). Work is shared between variants: a named
variant is applied once, then each grid point on top of it, and so on.

Variant names join the parts: ``<variant>_<grid labels>_<zip label>_<step>``. A grid axis given as a
list gets labels ``<last path component><value>`` (``seed42``); given as a mapping, its keys are
the labels (``{b0.02: 0.02}``). A spec with no variants, axes or steps has one variant, ``base``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from sweepgen.compile import overrides
from sweepgen.compile.overrides import Op
from sweepgen.compile.spec import SAFE_NAME, Spec
from sweepgen.errors import SpecError


@dataclass(slots=True)
class Variant:
    """One resolved variant. ``config`` shares unchanged subtrees with the base: never mutate it."""

    name: str
    config: dict[str, Any]
    layers: dict[str, str]  # dotted path -> layer that set it last (variant:x, grid, zip, ablation:s)
    overrides: dict[str, Any]  # dotted path -> value the overrides put there (None when deleted)
    axes: dict[str, Any]  # grid/zip path -> this variant's value
    step: str | None  # ablation step name
    touched: tuple[tuple[str, ...], ...]  # every path an override wrote (for the fast gate)
    parts: dict[str, str] = field(default_factory=dict)  # variant/grid/zip/ablation -> name part
    run_name: str | None = None  # set by sweepgen.compile.derive.finalize
    run_dir: str | None = None  # the spec's run_dir template, rendered (derive.finalize)

    def context_view(self) -> dict[str, Any]:
        """``variant`` as templates and constraints see it."""
        view = {"name": self.name, "overrides": self.overrides, "axes": self.axes, "step": self.step}
        if self.run_name is not None:
            view["run_name"] = self.run_name
        return view


@dataclass
class Expansion:
    spec: Spec
    variants: list[Variant]
    implicit: frozenset[str]  # every path grid/zip/ablation/derived set (the gate decides by layer)

    def by_name(self, name: str) -> Variant | None:
        return next((v for v in self.variants if v.name == name), None)


@dataclass(frozen=True)
class _Point:
    """One choice along the axes: its ops and its contribution to the name."""

    label: str | None
    ops: tuple[Op, ...]
    axes: tuple[tuple[str, Any], ...] = ()


def expand(spec: Spec) -> Expansion:
    model, doc = spec.model, spec.doc
    named: list[tuple[str | None, list[Op]]] = []
    for vname, body in (model.variants or {None: {}}).items():
        if vname is None:
            named.append((None, []))
            continue
        ops = overrides.parse(body or {}, doc, ("variants", vname), f"variant:{vname}", spec.op_locs)
        named.append((vname, ops))
    grid_axes = [_grid_axis(spec, key, values) for key, values in (model.grid or {}).items()]
    zip_points = _zip_points(spec)
    steps = _ablation_points(spec)
    _check_overwrites(spec, grid_axes, zip_points, steps)
    # MERGE ops only assert that a mapping exists; the keys under them are separate ops.
    implicit = frozenset(
        op.dotted
        for op in itertools.chain(
            (op for axis in grid_axes for pt in axis for op in pt.ops),
            (op for pt in zip_points for op in pt.ops),
            (op for pt in steps for op in pt.ops),
        )
        if op.kind != overrides.MERGE
    )
    grid_points = [tuple(combo) for combo in itertools.product(*grid_axes)] if grid_axes else [()]

    variants: list[Variant] = []
    seen: dict[str, str] = {}
    for vname, vops in named:
        where = f"variant `{vname}`" if vname else "the base"
        cfg1, layers1 = overrides.apply_all(spec.base, vops, {}, where=where)
        touched1 = tuple(op.path for op in vops if op.kind != overrides.MERGE)
        over1 = {op.dotted: op.value for op in vops if op.kind != overrides.MERGE}
        for combo in grid_points:
            gops = [op for pt in combo for op in pt.ops]
            cfg2, layers2 = overrides.apply_all(cfg1, gops, layers1, where=where) if gops else (cfg1, layers1)
            for zpt in zip_points:
                cfg3, layers3 = (
                    overrides.apply_all(cfg2, list(zpt.ops), layers2, where=where)
                    if zpt.ops
                    else (cfg2, layers2)
                )
                for spt in steps:
                    cfg4, layers4 = (
                        overrides.apply_all(cfg3, list(spt.ops), layers3, where=where)
                        if spt.ops
                        else (cfg3, layers3)
                    )
                    parts = {}
                    if vname:
                        parts["variant"] = vname
                    if combo:
                        parts["grid"] = "_".join(pt.label for pt in combo)
                    if zpt.label:
                        parts["zip"] = zpt.label
                    if spt.label:
                        parts["ablation"] = spt.label
                    name = "_".join(parts.values()) or "base"
                    origin = f"variant {vname!r}, " if vname else ""
                    desc = origin + ", ".join(f"{k} {v!r}" for k, v in parts.items() if k != "variant")
                    if name in seen:
                        raise SpecError(
                            f"two variants are both named {name!r} ({seen[name]} / {desc})",
                            location=spec.loc(("grid",) if combo else ("variants",)),
                            hint="give grid axes explicit labels as a mapping {label: value}, "
                            "or rename variants",
                        )
                    seen[name] = desc or "base"
                    all_ops = gops + list(zpt.ops) + list(spt.ops)
                    over = dict(over1)
                    over.update((op.dotted, op.value) for op in all_ops if op.kind != overrides.MERGE)
                    axes = {p: v for pt in combo for p, v in pt.axes}
                    axes.update(zpt.axes)
                    variants.append(
                        Variant(
                            name=name,
                            config=cfg4,
                            layers=layers4,
                            overrides=over,
                            axes=axes,
                            step=spt.label,
                            parts=parts,
                            touched=touched1 + tuple(op.path for op in all_ops if op.kind != overrides.MERGE),
                        )
                    )
    return Expansion(spec=spec, variants=variants, implicit=implicit)


def _check_overwrites(
    spec: Spec, grid_axes: list[list[_Point]], zip_points: list[_Point], steps: list[_Point]
) -> None:
    """A later layer writing a path an axis sets (or a mapping above it) would silently overwrite the
    axis, producing duplicate runs under different names: an error at the later key."""
    doc = spec.doc
    # (path, key, what, location, number of values); a one-value axis overwritten makes no duplicates
    # (that is plain layer precedence), so only axes with several values are protected.
    grid = [
        (pts[0].ops[0].path, key, "grid axis", doc.loc(("grid", key), key=True), len(pts))
        for key, pts in zip(spec.model.grid or {}, grid_axes)
    ]
    zipped = [
        (op.path, key, "zip axis", doc.loc(("zip", key), key=True), len(zip_points))
        for key, op in zip(spec.model.zip or {}, zip_points[0].ops)
    ]
    ablation = []
    for op in steps[-1].ops:
        if op.kind != overrides.MERGE:
            ablation.append((op.path, op.dotted, f"ablation step `{op.layer.split(':', 1)[1]}`", op.loc, 0))

    def under(path: tuple[str, ...], other: tuple[str, ...]) -> bool:
        return path[: len(other)] == other

    for i, (path, key, what, _, count) in enumerate(grid):
        for opath, okey, _, oloc, ocount in grid[i + 1 :]:
            if (count > 1 and under(path, opath)) or (ocount > 1 and under(opath, path)):
                raise SpecError(
                    f"grid axes `{key}` and `{okey}` set the same path (or one under the other); "
                    "one would overwrite the other",
                    location=oloc,
                    key=okey,
                    hint="vary a path with one grid axis; give it all the values",
                )
    for later, later_name in ((zipped, "zip"), (ablation, "ablation")):
        earlier = grid + (zipped if later_name == "ablation" else [])
        for path, key, what, _, count in earlier:
            for opath, okey, owhat, oloc, _ in later:
                if count > 1 and under(path, opath):
                    raise SpecError(
                        f"`{'.'.join(path)}` is also set by {owhat} `{okey}`; the {what} `{key}` "
                        "would be overwritten (duplicate runs under different names)",
                        location=oloc,
                        key=okey,
                        hint=f"remove the {what} or the {owhat}: one path is varied in one place",
                    )


def _grid_axis(spec: Spec, key: str, values: Any) -> list[_Point]:
    doc = spec.doc
    at = ("grid", key)
    loc = doc.loc(at, key=True)
    kind, path = overrides.split_key(key, loc)
    if kind == overrides.DELETE:
        raise SpecError("a grid axis cannot delete a key", location=loc, hint="remove the `~`")
    if not values:
        raise SpecError(
            f"grid axis `{key}` has no values",
            location=doc.loc(at),
            hint="list at least one value, or remove the axis",
        )
    items = (
        list(values.items())
        if isinstance(values, dict)
        else [(_auto_label(path[-1], v, doc.loc(at + (i,))), v) for i, v in enumerate(values)]
    )
    points: list[_Point] = []
    seen: set[str] = set()
    for i, (label, value) in enumerate(items):
        vloc = doc.loc(at + ((label,) if isinstance(values, dict) else (i,)))
        if not SAFE_NAME.fullmatch(label):
            raise SpecError(
                f"grid label {label!r} is not filesystem-safe",
                location=vloc,
                hint="use letters, digits, `_`, `-` and `.`; give labels as a mapping {label: value}",
            )
        if label in seen:
            raise SpecError(
                f"grid axis `{key}` repeats the value/label {label!r}",
                location=vloc,
                hint="each value of an axis must be distinct",
            )
        seen.add(label)
        op = Op(kind, path, value, vloc, "grid")
        spec.op_locs.setdefault(("grid", ".".join(path)), loc)
        points.append(_Point(label, (op,), ((".".join(path), value),)))
    return points


def _zip_points(spec: Spec) -> list[_Point]:
    axes = spec.model.zip or {}
    if not axes:
        return [_Point(None, ())]
    doc = spec.doc
    keys = list(axes)
    n = len(axes[keys[0]])
    for key in keys:
        if len(axes[key]) != n:
            raise SpecError(
                f"zip axes must have equal lengths: `{keys[0]}` has {n} values, `{key}` has {len(axes[key])}",
                location=doc.loc(("zip", key), key=True),
                key=key,
                hint="zip steps the axes together; use `grid` for a cartesian product",
            )
    if n == 0:
        raise SpecError("zip axes are empty", location=doc.loc(("zip",)), hint="list values or remove `zip`")
    parsed = []
    for key in keys:
        loc = doc.loc(("zip", key), key=True)
        kind, path = overrides.split_key(key, loc)
        if kind == overrides.DELETE:
            raise SpecError("a zip axis cannot delete a key", location=loc, hint="remove the `~`")
        spec.op_locs.setdefault(("zip", ".".join(path)), loc)
        parsed.append((key, kind, path))
    points = []
    seen: set[str] = set()
    for i in range(n):
        ops, labels, axis_values = [], [], []
        for key, kind, path in parsed:
            value = axes[key][i]
            vloc = doc.loc(("zip", key, i))
            ops.append(Op(kind, path, value, vloc, "zip"))
            labels.append(_auto_label(path[-1], value, vloc))
            axis_values.append((".".join(path), value))
        label = "_".join(labels)
        if label in seen:
            raise SpecError(
                f"zip step {i + 1} repeats an earlier step ({label})",
                location=doc.loc(("zip",)),
                hint="each zip step must be distinct",
            )
        seen.add(label)
        points.append(_Point(label, tuple(ops), tuple(axis_values)))
    return points


def _ablation_points(spec: Spec) -> list[_Point]:
    steps = spec.model.ablation or []
    if not steps:
        return [_Point(None, ())]
    points, cumulative = [], []
    for i, step in enumerate(steps):
        layer = f"ablation:{step.name}"
        cumulative = cumulative + overrides.parse(
            step.set, spec.doc, ("ablation", i, "set"), layer, spec.op_locs
        )
        points.append(_Point(step.name, tuple(cumulative)))
    return points


def _auto_label(leaf: str, value: Any, loc) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, float):
        text = repr(value)  # shortest round-trip form: 0.02, 1e-05, inf
    elif isinstance(value, (int, str)):
        text = str(value)
    else:
        raise SpecError(
            f"cannot name a variant after a {type(value).__name__} value",
            location=loc,
            hint="give the axis as a mapping {label: value} to name its values",
        )
    return f"{leaf}{text}"
