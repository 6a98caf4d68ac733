"""Every swept value reaches the files it renders, or the render stops.

A grid or zip axis over `beta` whose template never writes `beta` renders files that differ only in
their variants' names and run folders: the lock records two values, the trainer runs one config
twice, and `report` compares two arms of the same run ("no evidence", looking like an answer). So
each rendered file's text is also hashed with its variant's name, run name and run folder masked
(``name_blind``); for each axis, variants that differ in that axis alone (the same named variant,
ablation step and every other axis) are compared, and an axis whose every such group renders one
name-blind text is an error at the axis's spec line.

An axis is judged only where such groups exist: a random-search (`sample:`) or zip path, whose
variants differ in several paths at once, and a search's trials are not judged. Where an axis
changes the file in any one group (a value the template writes only under some condition), it
passes.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable

from sweepgen.compile.output.render import RenderedFile
from sweepgen.compile.spec.variants.expand import Expansion, Variant
from sweepgen.errors import ValidationError


def name_blind(text: str, variant: Variant, run_dir: str | None) -> bytes:
    """A digest of ``text`` with the variant's name, run name and run folder masked, longest first
    (a run folder holds the name; the name may hold the run name). A name that is one of the
    variant's own axis values (a grid over `run_name`) stays: it is that value, written."""
    values = {str(v) for v in variant.axes.values()}
    words = {w for w in (run_dir, variant.run_name, variant.name) if w and w not in values}
    for word in sorted(words, key=len, reverse=True):
        text = text.replace(word, "\0")
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).digest()


def check(files: list[RenderedFile], expansion: Expansion) -> None:
    """Exit 2 at the first grid axis none of whose values changes what its variants render."""
    judged = [f for f in files if f.name_blind is not None]
    paths = dict.fromkeys(p for f in judged for p in f.variant.axes)
    for path in paths:
        dead = _dead_pair(path, judged)
        if dead is not None:
            one, two = dead
            raise ValidationError(
                f"axis `{path}` changes nothing the template writes: variants {one.variant.name!r} and "
                f"{two.variant.name!r} differ only in it, and their files ({one.path}, {two.path}) differ "
                "only in their names and run folders, so their runs would be one run twice",
                location=expansion.where("grid", path) or expansion.spec.loc(("template",)),
                key=path,
                hint=f"write the value in the template (`{{{{ config.{path} }}}}`, or the whole config "
                "with `{{ config | to_yaml }}`), or drop the axis",
            )


def _dead_pair(path: str, files: Iterable[RenderedFile]) -> tuple[RenderedFile, RenderedFile] | None:
    """Two files that differ in ``path`` alone and render alike, when every such group renders
    alike; None when one group's files differ (or no group has two values of ``path``)."""
    example = None
    for group in _alike_but(path, files):
        values = {repr(f.variant.axes[path]) for f in group}
        if len(values) < 2:
            continue
        if len({f.name_blind for f in group}) > 1:
            return None  # the axis changes the file here
        if example is None:
            example = _pair(group, path)
    return example


def _alike_but(path: str, files: Iterable[RenderedFile]) -> Iterable[list[RenderedFile]]:
    """The files that set ``path``, grouped by everything else that tells them apart: within a
    group, only ``path`` can have made their files differ."""
    groups: dict[tuple[object, ...], list[RenderedFile]] = defaultdict(list)
    for f in files:
        if path in f.variant.axes:
            groups[_others(f.variant, path)].append(f)
    return groups.values()


def _pair(group: list[RenderedFile], path: str) -> tuple[RenderedFile, RenderedFile]:
    """The group's first file and one with another value of ``path``."""
    first = group[0]
    other = next(f for f in group if repr(f.variant.axes[path]) != repr(first.variant.axes[path]))
    return first, other


def _others(variant: Variant, path: str) -> tuple[object, ...]:
    """Everything but ``path`` that tells the variants apart: its named variant, ablation step and
    the other axes' values."""
    axes = tuple(sorted((p, repr(v)) for p, v in variant.axes.items() if p != path))
    return (variant.step, variant.parts.get("variant"), axes)
