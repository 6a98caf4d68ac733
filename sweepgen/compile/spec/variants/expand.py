"""Expansion: named variants x grid x zip x sample x ablation, as plain dict work on a base resolved once.

Layers apply in one fixed order, and each resolved variant remembers which layer set every path it
overrides: base (or an include file) < named variant < grid axes < zip groups < sampled points <
ablation steps (cumulative: step k applies the ``set`` of steps 1..k). Work is shared between
variants: a named variant is applied once, then each grid point on top of it, and so on.

Variant names join the parts: ``<variant>_<grid labels>_<zip labels>_<sample label>_<step>``, with
``-`` instead of ``_`` under ``names: readable`` (``naming``). Zip groups are crossed with each other;
within a group the axes step together. A grid axis given as a list gets labels ``<last path
component><value>`` (``seed42``; ``loss_type_grpo`` for a text value when readable); given as a
mapping, its keys are the labels (``{b0.02: 0.02}``). A spec with no variants, axes or steps has one
variant, ``base``.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sweepgen import paths
from sweepgen.compile.spec import overrides
from sweepgen.compile.spec.limits import raise_hint
from sweepgen.compile.spec.model import SAFE_NAME, Spec
from sweepgen.compile.spec.overrides import Op
from sweepgen.compile.spec.sampling import sample as sampling
from sweepgen.compile.spec.variants import naming
from sweepgen.errors import Location, SpecError


@dataclass(frozen=True, slots=True)
class Variant:
    """One resolved variant. ``config`` shares unchanged subtrees with the base: never mutate it.
    Later stages make new variants from it (``derive`` adds run names and derived values)."""

    name: str
    config: dict[str, Any]
    layers: dict[str, str]  # dotted path -> layer that set it last (variant:x, grid, zip, ablation:s)
    overrides: dict[str, Any]  # dotted path -> value the overrides put there (None when deleted)
    axes: dict[str, Any]  # grid/zip path -> this variant's value
    step: str | None  # ablation step name
    touched: tuple[tuple[str, ...], ...]  # every path an override wrote (for the fast gate)
    parts: dict[str, str] = field(default_factory=dict)  # variant/grid/zip/ablation -> name part
    run_name: str | None = None  # set by sweepgen.compile.spec.variants.derive.derive
    run_dir: str | None = None  # the spec's run_dir template, rendered (derive.derive)

    def context_view(self) -> dict[str, Any]:
        """``variant`` as templates and constraints see it."""
        view = {"name": self.name, "overrides": self.overrides, "axes": self.axes, "step": self.step}
        if self.run_name is not None:
            view["run_name"] = self.run_name
        return view


Locs = dict[tuple[str, str], Location]  # (layer, dotted path) -> where the spec set it


@dataclass(frozen=True)
class Expansion:
    """What ``expand`` (and then ``derive``) return: the variants, and where each layer set a path."""

    spec: Spec
    variants: list[Variant]
    implicit: frozenset[str]  # every path grid/zip/ablation/derived set (the gate decides by layer)
    locs: Locs = field(default_factory=dict)
    # variant id -> (variant, its differences): the gate, the varying paths and the lock all ask
    _differences: dict[int, tuple[Variant, tuple[str, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def differences(self, variant: Variant) -> tuple[str, ...]:
        """The sorted leaf paths where ``variant`` (one of ours) differs from the base, found under what
        its overrides touched (``paths.diff_at``), computed once."""
        hit = self._differences.get(id(variant))
        if hit is not None and hit[0] is variant:
            return hit[1]
        # interned: 100,000 variants differ at the same few paths, one string each
        found = tuple(sorted(map(sys.intern, paths.diff_at(self.spec.base, variant.config, variant.touched))))
        self._differences[id(variant)] = (variant, found)
        return found

    def by_name(self, name: str) -> Variant | None:
        return next((v for v in self.variants if v.name == name), None)

    def where(self, layer: str, path: str) -> Location | None:
        """Where ``layer`` set ``path`` (falls back to the closest enclosing path)."""
        if layer.startswith("base") or layer.startswith("include"):
            return self.spec.base_where(path)
        parts = path.split(".")
        while parts:
            loc = self.locs.get((layer, ".".join(parts)))
            if loc is not None:
                return loc
            parts.pop()
        return None


@dataclass(frozen=True)
class _Point:
    """One choice along the axes: its ops and its contribution to the name."""

    label: str | None
    ops: tuple[Op, ...]
    axes: tuple[tuple[str, Any], ...] = ()


def expand(spec: Spec) -> Expansion:
    """Every variant of the spec, resolved, and where each override was written."""
    model = spec.model
    locs: Locs = {}
    named = _named(spec, locs)
    grid_axes = [_grid_axis(spec, key, values, locs) for key, values in (model.grid or {}).items()]
    zip_groups = _zip_groups(spec, locs)
    # counted from the sizes before the zip groups are crossed and the sample drawn, either of which
    # could be the 10^10-point product the limit is there to refuse
    _check_count(
        spec,
        len(named),
        [len(axis) for axis in grid_axes],
        math.prod(len(group) for group in zip_groups),
        spec.model.sample.n if spec.model.sample else 1,
        len(spec.model.ablation or [None]),
    )
    zip_points = _cross(zip_groups, naming.separator(spec))
    sample_points = _sample_points(spec, locs)
    steps = _ablation_points(spec, locs)
    _check_overwrites(spec, locs, grid_axes, zip_groups, sample_points, steps)
    implicit = _checked_layers(spec, named, grid_axes, zip_points, sample_points, steps)
    # without grid axes, the one empty grid point
    grid_points: list[tuple[_Point, ...]] = list(itertools.product(*grid_axes))
    variants = _combine(spec, named, grid_points, zip_points, sample_points, steps)
    return Expansion(spec=spec, variants=variants, implicit=implicit, locs=locs)


def _checked_layers(
    spec: Spec,
    named: list[tuple[str | None, list[Op]]],
    grid_axes: list[list[_Point]],
    zip_points: list[_Point],
    sample_points: list[_Point],
    steps: list[_Point],
) -> frozenset[str]:
    """Every layer's overrides type-checked against the base; the paths the layers below the named
    variants set (MERGE ops only assert that a mapping exists; the keys under them are separate ops)."""
    for maybe_name, ops in named:
        overrides.check_types(spec.base, ops, f"variant `{maybe_name}`" if maybe_name else "the base")
    layer_ops = (
        (_ops_of(itertools.chain.from_iterable(grid_axes)), "the grid"),
        (_ops_of(zip_points), "zip"),
        (_ops_of(sample_points), "the sample"),
        (_ops_of(steps), "the ablation"),
    )
    for ops_of_layer, what in layer_ops:
        overrides.check_types(spec.base, ops_of_layer, what)
    return frozenset(op.dotted for ops_of_layer, _ in layer_ops for op in _setting(ops_of_layer))


def _ops_of(points: Iterable[_Point]) -> list[Op]:
    """The ops of several points, in order."""
    return [op for pt in points for op in pt.ops]


def _named(spec: Spec, locs: Locs) -> list[tuple[str | None, list[Op]]]:
    """The named variants and their override ops; one unnamed variant when the spec has none."""
    named: list[tuple[str | None, list[Op]]] = []
    if not spec.model.variants:
        named.append((None, []))
    for declared, body in (spec.model.variants or {}).items():
        ops = overrides.parse(body or {}, spec.doc, ("variants", declared), f"variant:{declared}", locs)
        named.append((declared, ops))
    return named


class _Names:
    """Variant names, checked unique as they are made (also case-folded: they become file names)."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.seen: dict[str, tuple[dict[str, str], str | None]] = {}  # name -> what made it
        self.folded: dict[str, str] = {}

    def add(self, parts: dict[str, str], vname: str | None, on_grid: bool, last: str | None = None) -> str:
        """``last``: the name's final label (its last axis' value, e.g. the seed's), which a readable
        name over MAX_NAME keeps whole, so a group's runs still share the part before it."""
        whole = naming.separator(self.spec).join(parts.values()) or "base"
        keep = last if naming.is_readable(self.spec) and last and whole.endswith(last) else None
        name = _short_name(whole, keep)
        self._claim(name, parts, vname, on_grid)
        return name

    def _claim(self, name: str, parts: dict[str, str], vname: str | None, on_grid: bool) -> None:
        """Take ``name`` for the variant ``parts`` make, refused when an earlier variant has it, or
        has it in another case: names become run folders, one folder on macOS and Windows."""
        where = self.spec.loc(("grid",) if on_grid else ("variants",))
        if name in self.seen:
            raise SpecError(
                f"two variants are both named {name!r} ({_desc(*self.seen[name])} / {_desc(parts, vname)})",
                location=where,
                hint="give grid axes explicit labels as a mapping {label: value}, or rename variants",
            )
        self.seen[name] = (parts, vname)
        if self.folded.setdefault(name.lower(), name) != name:
            raise SpecError(
                f"variant names {self.folded[name.lower()]!r} and {name!r} differ only in case",
                location=where,
                hint="they would collide on macOS and Windows; give the axis distinct "
                "labels as a mapping {label: value}",
            )


def _desc(parts: dict[str, str], vname: str | None) -> str:
    """What made a variant, for a message: ``variant 'a', grid 'seed1'`` (``base`` for the base)."""
    origin = f"variant {vname!r}, " if vname else ""
    return origin + ", ".join(f"{k} {v!r}" for k, v in parts.items() if k != "variant") or "base"


def _combine(
    spec: Spec,
    named: list[tuple[str | None, list[Op]]],
    grid_points: list[tuple[_Point, ...]],
    zip_points: list[_Point],
    sample_points: list[_Point],
    steps: list[_Point],
) -> list[Variant]:
    """Every named variant x grid point x zip point x sample point x ablation step, in that order;
    each layer applied once and shared by everything below it."""
    variants: list[Variant] = []
    names = _Names(spec)
    sep = naming.separator(spec)
    # every grid point of a variant has the same layer mapping: one dict for all of them
    layer_maps: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
    for vname, vops in named:
        where = f"variant `{vname}`" if vname else "the base"
        cfg1, layers1 = overrides.apply_all(spec.base, vops, {}, where=where)
        for combo in grid_points:
            gops = _ops_of(combo)
            cfg2, layers2 = _applied(cfg1, gops, layers1, where)
            for zpt, smp in itertools.product(zip_points, sample_points):
                zsops = list(zpt.ops) + list(smp.ops)
                cfg3, layers3 = _applied(cfg2, zsops, layers2, where)
                for spt in steps:
                    cfg4, layers4 = _applied(cfg3, list(spt.ops), layers3, where)
                    parts = _parts(vname, combo, zpt, smp, spt, sep)
                    setting = _setting(vops + gops + zsops + list(spt.ops))
                    name = names.add(parts, vname, bool(combo), _last(tuple(parts.items()), combo))
                    layers = layer_maps.setdefault(tuple(layers4.items()), layers4)
                    variants.append(_variant(name, cfg4, layers, setting, (*combo, zpt, smp), spt, parts))
    return variants


def _variant(
    name: str,
    config: dict[str, Any],
    layers: dict[str, str],
    setting: list[Op],
    points: tuple[_Point, ...],
    step: _Point,
    parts: dict[str, str],
) -> Variant:
    """One variant of the product: its settings and axis values gathered from its points."""
    return Variant(
        name=name,
        config=config,
        layers=layers,
        overrides={op.dotted: op.value for op in setting},
        axes={p: v for pt in points for p, v in pt.axes},
        step=step.label,
        parts=parts,
        touched=tuple(op.path for op in setting),
    )


def _setting(ops: list[Op]) -> list[Op]:
    """The ops that set a value (a MERGE op only asserts that a mapping exists)."""
    return [op for op in ops if op.kind != overrides.MERGE]


def _applied(
    config: dict[str, Any], ops: list[Op], layers: dict[str, Any], where: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``ops`` applied to ``config``; with none, the same config and layers (shared, never copied)."""
    return overrides.apply_all(config, ops, layers, where=where) if ops else (config, layers)


def _parts(
    vname: str | None, combo: tuple[_Point, ...], zpt: _Point, smp: _Point, spt: _Point, sep: str
) -> dict[str, str]:
    """What each layer contributes to a variant's name (a layer without a label contributes nothing)."""
    labels = (
        ("variant", vname),
        ("grid", sep.join(str(pt.label) for pt in combo) if combo else None),
        ("zip", zpt.label),
        ("sample", smp.label),
        ("ablation", spt.label),
    )
    return {k: v for k, v in labels if v}


def _check_count(spec: Spec, named: int, grid: list[int], zipped: int, sampled: int, steps: int) -> None:
    """The variant count from the axis sizes, before anything is expanded: a 500-byte grid of ten
    10-value axes is 10^10 variants, which must be an error in milliseconds, not out-of-memory."""
    total = named * zipped * sampled * steps
    for size in grid:
        total *= size
    limit = spec.model.limits.variants
    if total > limit:
        sizes = " x ".join(
            str(n)
            for n, used in (
                (named, spec.model.variants),
                *((g, True) for g in grid),
                (zipped, spec.model.zip),
                (sampled, spec.model.sample),
                (steps, spec.model.ablation),
            )
            if used
        )
        raise SpecError(
            f"the spec expands to {total:,} variants ({sizes}), more than the limit of {limit:,}",
            location=spec.loc(("grid",) if grid else ()),
            hint="shrink the axes, or " + raise_hint("variants"),
        )


# (path, key, what, location, number of values) of one axis's path, for _check_overwrites
_AxisPath = tuple[tuple[str, ...], str, str, Location, int]


def _check_overwrites(
    spec: Spec,
    locs: Locs,
    grid_axes: list[list[_Point]],
    zip_groups: list[list[_Point]],
    sample_points: list[_Point],
    steps: list[_Point],
) -> None:
    """A later layer writing a path an axis sets (or a mapping above it) would silently overwrite the
    axis, producing duplicate runs under different names: an error at the later key."""
    # a one-value axis overwritten makes no duplicates (that is plain layer precedence), so only
    # axes with several values are protected.
    grid = _grid_paths(spec, grid_axes)
    zipped = _zip_paths(locs, zip_groups)
    sampled = _sample_paths(sample_points)
    ablation = _ablation_paths(steps)
    _check_within(grid, "grid", "one grid axis; give it all the values")
    _check_within(zipped, "zip", "one zip group")
    layers = [grid, zipped, sampled, ablation]
    for k, later in enumerate(layers[1:], start=1):
        _check_across([entry for group in layers[:k] for entry in group], later)


def _grid_paths(spec: Spec, grid_axes: list[list[_Point]]) -> list[_AxisPath]:
    """The path of each grid axis, located at its key."""
    doc = spec.doc
    return [
        (pts[0].ops[0].path, key, "grid axis", doc.loc(("grid", key), key=True), len(pts))
        for key, pts in zip(spec.model.grid or {}, grid_axes)
    ]


def _zip_paths(locs: Locs, zip_groups: list[list[_Point]]) -> list[_AxisPath]:
    """The path of each zip axis of every group."""
    return [  # located at the axis key, like grid axes (the op itself is at its value)
        (op.path, op.dotted, "zip axis", locs.get(("zip", op.dotted), op.loc), len(points))
        for points in zip_groups
        for op in points[0].ops
    ]


def _sample_paths(sample_points: list[_Point]) -> list[_AxisPath]:
    """The path of each sample axis."""
    return [(op.path, op.dotted, "sample axis", op.loc, len(sample_points)) for op in sample_points[0].ops]


def _ablation_paths(steps: list[_Point]) -> list[_AxisPath]:
    """The paths the last ablation step sets."""
    return [
        (op.path, op.dotted, f"ablation step `{op.layer.split(':', 1)[1]}`", op.loc, 0)
        for op in steps[-1].ops
        if op.kind != overrides.MERGE
    ]


def _under(path: tuple[str, ...], other: tuple[str, ...]) -> bool:
    return path[: len(other)] == other


def _check_within(same: list[_AxisPath], word: str, fix: str) -> None:
    """Two axes of one layer setting one path (or one under the other)."""
    for i, (path, key, _, _, count) in enumerate(same):
        for opath, okey, _, oloc, ocount in same[i + 1 :]:
            if (count > 1 and _under(path, opath)) or (ocount > 1 and _under(opath, path)):
                raise SpecError(
                    f"{word} axes `{key}` and `{okey}` set the same path (or one under the other); "
                    "one would overwrite the other",
                    location=oloc,
                    key=okey,
                    hint=f"vary a path in {fix}",
                )


def _check_across(earlier: list[_AxisPath], later: list[_AxisPath]) -> None:
    """A later layer's path at or above an earlier layer's axis of several values."""
    for path, key, what, _, count in earlier:
        for opath, okey, owhat, oloc, _ in later:
            if count > 1 and _under(path, opath):
                raise SpecError(
                    f"`{'.'.join(path)}` is also set by {owhat} `{okey}`; the {what} `{key}` "
                    "would be overwritten (duplicate runs under different names)",
                    location=oloc,
                    key=okey,
                    hint=f"remove the {what} or the {owhat}: one path is varied in one place",
                )


def _axis_key(key: str, loc: Location, layer: str, locs: Locs) -> tuple[str, tuple[str, ...]]:
    """An axis key's override kind and path, its location recorded in ``locs``: an axis sets
    values, it never deletes a key."""
    kind, path = overrides.split_key(key, loc)
    if kind == overrides.DELETE:
        raise SpecError(f"a {layer} axis cannot delete a key", location=loc, hint="remove the `~`")
    locs.setdefault((layer, ".".join(path)), loc)
    return kind, path


def _grid_axis(spec: Spec, key: str, values: Any, locs: Locs) -> list[_Point]:
    doc = spec.doc
    at = ("grid", key)
    loc = doc.loc(at, key=True)
    kind, path = _axis_key(key, loc, "grid", locs)
    if not values:
        raise SpecError(
            f"grid axis `{key}` has no values",
            location=doc.loc(at),
            hint="list at least one value, or remove the axis",
        )
    items = (
        list(values.items())
        if isinstance(values, dict)
        else [(_label(spec, path[-1], v, doc.loc(at + (i,))), v) for i, v in enumerate(values)]
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
        points.append(_Point(label, (op,), ((".".join(path), value),)))
    return points


def _zip_groups(spec: Spec, locs: Locs) -> list[list[_Point]]:
    """Each zip group's points. ``zip: {path: [...]}`` is one group; a list names several."""
    raw = spec.model.zip
    if not raw:
        return []
    if isinstance(raw, dict):
        return [_zip_group(spec, raw, None, ("zip",), locs)]
    names: dict[str, int] = {}
    groups = []
    for g, group in enumerate(raw):
        if group.name in names:
            raise SpecError(
                f"two zip groups are named {group.name!r}",
                location=spec.doc.loc(("zip", g, "name")),
                hint="give each zip group its own name",
            )
        names[group.name] = g
        groups.append(_zip_group(spec, group.axes, group.labels, ("zip", g, "axes"), locs))
    return groups


def _zip_length(
    spec: Spec, axes: dict[str, list[Any]], labels: list[str] | None, at: tuple[str | int, ...]
) -> int:
    """The number of zip steps: every axis (and ``labels``) as long as the first, and not empty."""
    doc = spec.doc
    keys = list(axes)
    n = len(axes[keys[0]])
    for key in keys:
        if len(axes[key]) != n:
            raise SpecError(
                f"zip axes must have equal lengths: `{keys[0]}` has {n} values, `{key}` has {len(axes[key])}",
                location=doc.loc(at + (key,), key=True),
                key=key,
                hint="zip steps the axes together; use `grid` for a cartesian product",
            )
    if n == 0:
        raise SpecError("zip axes are empty", location=doc.loc(at), hint="list values or remove the zip axes")
    if labels is not None and len(labels) != n:
        raise SpecError(
            f"`labels` has {len(labels)} names for {n} zip steps",
            location=doc.loc(at[:-1] + ("labels",)),
            hint="give one label per step, in order",
        )
    return n


def _zip_group(
    spec: Spec, axes: dict[str, list[Any]], labels: list[str] | None, at: tuple[str | int, ...], locs: Locs
) -> list[_Point]:
    doc = spec.doc
    keys = list(axes)
    n = _zip_length(spec, axes, labels, at)
    parsed = []
    for key in keys:
        loc = doc.loc(at + (key,), key=True)
        kind, path = _axis_key(key, loc, "zip", locs)
        parsed.append((key, kind, path, loc))
    points = []
    seen: set[str] = set()
    for i in range(n):
        ops, auto, axis_values = [], [], []
        for key, kind, path, _ in parsed:
            value = axes[key][i]
            vloc = doc.loc(at + (key, i))
            ops.append(Op(kind, path, value, vloc, "zip"))
            if labels is None:
                auto.append(_label(spec, path[-1], value, vloc))
            axis_values.append((".".join(path), value))
        label = labels[i] if labels is not None else naming.separator(spec).join(auto)
        _check_zip_label(spec, label, i, seen, at, labels is not None)
        points.append(_Point(label, tuple(ops), tuple(axis_values)))
    return points


def _check_zip_label(
    spec: Spec, label: str, i: int, seen: set[str], at: tuple[str | int, ...], given: bool
) -> None:
    """Step ``i``'s label (``given`` in ``labels``, else made from its values) is a safe file name
    and distinct from the earlier steps', then recorded in ``seen``."""
    labels_at = at[:-1] + ("labels",)
    if not SAFE_NAME.fullmatch(label):
        raise SpecError(
            f"zip label {label!r} is not filesystem-safe",
            location=spec.doc.loc(labels_at + (i,)),
            hint="use letters, digits, `_`, `-` and `.`",
        )
    if label in seen:
        raise SpecError(
            f"zip step {i + 1} repeats an earlier step ({label})",
            location=spec.doc.loc(labels_at + (i,) if given else at),
            hint="each zip step must be distinct",
        )
    seen.add(label)


def _cross(groups: list[list[_Point]], sep: str) -> list[_Point]:
    """Zip groups crossed with each other: one point per combination, labels joined in group order."""
    if not groups:
        return [_Point(None, ())]
    return [
        _Point(
            sep.join(pt.label for pt in combo if pt.label),
            tuple(_ops_of(combo)),
            tuple(av for pt in combo for av in pt.axes),
        )
        for combo in itertools.product(*groups)
    ]


def _sample_points(spec: Spec, locs: Locs) -> list[_Point]:
    """The drawn points of ``sample:``, labelled by their values at ``digits`` significant digits."""
    block = spec.model.sample
    if block is None:
        return [_Point(None, ())]
    doc = spec.doc
    parsed = []
    for key in block.axes:
        loc = doc.loc(("sample", "axes", key), key=True)
        kind, path = _axis_key(key, loc, "sample", locs)
        parsed.append((kind, path, loc))
    points: list[_Point] = []
    by_label: dict[str, int] = {}
    by_values: dict[str, int] = {}
    for i, values in enumerate(sampling.draw(block)):
        ops = tuple(Op(kind, path, v, loc, "sample") for (kind, path, loc), v in zip(parsed, values))
        label = naming.separator(spec).join(
            _label(spec, path[-1], _shown(v, block.digits), loc) for (_, path, loc), v in zip(parsed, values)
        )
        _check_new_point(spec, block.digits, i, values, label, by_values, by_label)
        points.append(_Point(label, ops, tuple((".".join(p), v) for (_, p, _), v in zip(parsed, values))))
    return points


def _shown(value: Any, digits: int) -> Any:
    """A drawn value as its label shows it: a float at ``digits`` significant digits."""
    return sampling.short_number(value, digits) if isinstance(value, float) else value


def _check_new_point(
    spec: Spec,
    digits: int,
    i: int,
    values: list[Any],
    label: str,
    by_values: dict[str, int],
    by_label: dict[str, int],
) -> None:
    """The ``i``-th drawn point neither repeats an earlier one nor reads like one, then recorded."""
    doc = spec.doc
    exact = repr([(type(v).__name__, v) for v in values])
    if exact in by_values:
        raise SpecError(
            f"sample point {i + 1} repeats point {by_values[exact] + 1} exactly ({label})",
            location=doc.loc(("sample", "n")),
            hint="a choice-only sample repeats itself: use `grid` for categorical axes, or lower `n`",
        )
    if label in by_label:
        raise SpecError(
            f"sample points {by_label[label] + 1} and {i + 1} both read {label!r} at "
            f"{digits} significant digits",
            location=doc.loc(("sample", "digits"))
            if "digits" in (doc.data.get("sample") or {})
            else doc.loc(("sample",)),
            hint="raise `digits` so every drawn point gets its own name",
        )
    by_values[exact], by_label[label] = i, i


def _ablation_points(spec: Spec, locs: Locs) -> list[_Point]:
    steps = spec.model.ablation or []
    if not steps:
        return [_Point(None, ())]
    points: list[_Point] = []
    cumulative: list[Op] = []
    for i, step in enumerate(steps):
        layer = f"ablation:{step.name}"
        cumulative = cumulative + overrides.parse(step.set, spec.doc, ("ablation", i, "set"), layer, locs)
        points.append(_Point(step.name, tuple(cumulative)))
    return points


MAX_NAME = 60  # longer names are cut and suffixed with a hash of the whole name
MAX_LAST = 15  # a readable name's final label up to this long is kept whole past the cut (seed12345)


def _short_name(name: str, last: str | None = None) -> str:
    """``name``, or for one over MAX_NAME characters its first 51 and 8 hex digits of its sha256:
    still unique, still readable, and short enough for file names, tables and Slurm job names. The
    values behind the cut stay in the config, the lock (`values`) and `sweepgen list`. With ``last``
    (a readable name's final label, up to MAX_LAST): the part before it is cut to a fixed length and
    hashed instead, and ``last`` kept (``<head>-<hash of head>-seed3``), so runs that differ only
    there stay one group with one name."""
    if last is not None and len(last) <= MAX_LAST:
        head = name[: len(name) - len(last)]
        if len(head) + MAX_LAST <= MAX_NAME:  # decided on the head alone: a group is cut all or none
            return name
        digest = hashlib.sha256(head.encode("utf-8")).hexdigest()[:8]
        # the head's cut does not depend on ``last``: seed9 and seed10 keep the same head
        return f"{head[: MAX_NAME - MAX_LAST - 10].rstrip('_.-')}-{digest}-{last}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9].rstrip('_.-')}-{digest}"


def _last(labels: tuple[tuple[str, str | None], ...], combo: tuple[_Point, ...]) -> str | None:
    """The final label of a name: the ablation step, sample, zip step or last grid axis' label."""
    for kind, label in reversed(labels):
        if label:
            return str(combo[-1].label) if kind == "grid" else label
    return None


def _label(spec: Spec, leaf: str, value: Any, loc: Location) -> str:
    return naming.auto_label(leaf, value, loc, naming.is_readable(spec))
