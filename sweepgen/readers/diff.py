"""Semantic diff of two configs, and the ``--allow`` gate over it.

deepdiff is the reference (``deepdiff_changes``, configured so it skips nothing); ``diff`` is a
direct tree walk held equal to it by a property test, because importing deepdiff alone costs more
than a whole ``sweepgen diff`` should. Both report in sweepgen's own terms: one ``Change`` per
differing path, with a dotted path, the old and new values and their types. The comparison is
type-strict: ``1``, ``1.0`` and ``True`` differ, as do a tuple and a list, or a
``Ref`` to ``torch.bfloat16`` and the string "torch.bfloat16".

Paths: mapping keys joined by dots (``training.seed``), sequence indices in brackets
(``pipeline[2].type``), and keys that would be ambiguous bare (containing ``.``, brackets, quotes,
``*`` or spaces, or empty) as JSON strings in brackets (``env["a.b"]``). Globs use the same syntax
plus ``*`` (exactly one segment, or part of one: ``lr_*``) and ``**`` (any number of segments,
including none, so ``params.**`` also allows adding or removing ``params`` as a whole).
"""

from __future__ import annotations

import datetime
import difflib
import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sweepgen.errors import UserError
from sweepgen.globs import SYNTAX_HINT, Glob, GlobError, compile_glob
from sweepgen.readers.align import align


class _Absent:
    """The value on the side of an added or removed path."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()
Token = Any  # a mapping key (usually str) or a sequence index (int)


@dataclass(frozen=True)
class Change:
    """One differing path. ``kind`` is ``changed``, ``type_changed``, ``added`` or ``removed``."""

    path: tuple[Token, ...]
    kind: str
    old: Any = ABSENT
    new: Any = ABSENT

    @property
    def dotted(self) -> str:
        return format_path(self.path)

    @property
    def old_type(self) -> str | None:
        return _type_name(self.old)

    @property
    def new_type(self) -> str | None:
        return _type_name(self.new)


def _type_name(value: Any) -> str | None:
    """The exact type's name (``ref`` for a Python name reference); None for an absent side."""
    if value is ABSENT:
        return None
    if type(value).__name__ == "Ref":
        return "ref"
    if type(value).__name__ == "BigInt":
        return "int"
    if type(value).__name__ == "NotEvaluated":
        return "not evaluated"
    if type(value).__name__ == "CallData":
        return "call"
    if type(value).__name__ == "Sweep":
        return "sweep"
    return type(value).__name__


# diffing -----------------------------------------------------------------------------------------


def diff(old: Any, new: Any, *, aligned: bool = True) -> list[Change]:
    """Every path where ``new`` differs from ``old``, sorted by path; empty iff strictly equal.

    A direct walk of the two trees, without deepdiff's cost: importing it pulls in numpy, pandas
    and pyarrow (~0.6 s of a 1-2 s command) and it runs ~50x slower per pair. Lists of different
    lengths are ``aligned`` by content (``sweepgen.readers.align``): one inserted item is one
    ``added`` change at its index in ``new``, a removed one is ``removed`` at its index in ``old``,
    an item that pairs with one on the other side is compared at its index in ``new``. With
    ``aligned=False`` lists are compared index by index, and the walk reports exactly what
    ``deepdiff_changes`` reports (a hypothesis property test holds the two together).
    """
    changes: list[Change] = []
    _walk(old, new, (), changes, aligned)
    return sorted(changes, key=lambda c: _sort_key(c.path))


def _walk(old: Any, new: Any, path: tuple[Any, ...], out: list[Change], aligned: bool) -> None:  # noqa: C901, PLR0912 - one branch per value kind, each with its change kind
    if type(old) is not type(new):
        out.append(Change(path, "type_changed", old, new))
    elif isinstance(old, dict):
        # keys match by type too: {1: x} and {True: x} (equal and same hash in Python) differ
        new_keys = {_tagged(k): k for k in new}
        old_tags = set()
        for key, value in old.items():
            tag = _tagged(key)
            old_tags.add(tag)
            if tag in new_keys:
                _walk(value, new[new_keys[tag]], path + (key,), out, aligned)
            else:
                out.append(Change(path + (key,), "removed", value, ABSENT))
        for tag, key in new_keys.items():
            if tag not in old_tags:
                out.append(Change(path + (key,), "added", ABSENT, new[key]))
    elif isinstance(old, (set, frozenset)):
        if {_tagged(x) for x in old} != {_tagged(x) for x in new}:
            out.append(Change(path, "changed", old, new))
    elif isinstance(old, (list, tuple)) and aligned and len(old) != len(new):
        for i, j in align(old, new):
            if i is None and j is not None:
                out.append(Change(path + (j,), "added", ABSENT, new[j]))
            elif j is None and i is not None:
                out.append(Change(path + (i,), "removed", old[i], ABSENT))
            elif i is not None and j is not None:
                _walk(old[i], new[j], path + (j,), out, aligned)
    elif isinstance(old, (list, tuple)):
        for index, (a, b) in enumerate(zip(old, new)):
            _walk(a, b, path + (index,), out, aligned)
        for index in range(len(new), len(old)):
            out.append(Change(path + (index,), "removed", old[index], ABSENT))
        for index in range(len(old), len(new)):
            out.append(Change(path + (index,), "added", ABSENT, new[index]))
    elif isinstance(old, float):
        if not _floats_equal(old, new):
            out.append(Change(path, "changed", old, new))
    elif isinstance(old, (datetime.datetime, datetime.time)):
        # `==` compares instants: 07:32Z and 08:32+01:00 are equal to it, yet a program reading
        # either sees another hour and offset; the written value (offset included) decides
        if old.isoformat() != new.isoformat():
            out.append(Change(path, "changed", old, new))
    elif old != new:
        out.append(Change(path, "changed", old, new))


def deepdiff_changes(old: Any, new: Any) -> list[Change]:
    """The reference: deepdiff's verdict on the pair, in the same terms as ``diff``."""
    from deepdiff import DeepDiff  # noqa: PLC0415 - lazy: importing deepdiff takes ~0.6 s

    tree = DeepDiff(
        old,
        new,
        view="tree",
        # Compare sequences index by index: the same rule as flattening to leaf paths, and
        # symmetric, so diff(a, b) and diff(b, a) name the same paths.
        zip_ordered_iterables=True,
        # Always descend into differing mappings instead of reporting a whole-mapping swap.
        threshold_to_diff_deeper=0,
        ignore_nan_inequality=True,
        # deepdiff skips keys such as `__doc__` or `__init__` by default: a silently lost change
        ignore_private_variables=False,
        custom_operators=[_signed_zeros()],
    )
    changes: dict[tuple[Any, ...], Change] = {}
    for report, levels in tree.items():
        for level in levels:
            change = _to_change(report, level)
            changes[change.path] = change
    return sorted(changes.values(), key=lambda c: _sort_key(c.path))


def _signed_zeros() -> Any:
    """deepdiff compares floats by ``==``, so ``-0.0`` and ``0.0`` are one value to it: an operator
    that reports them changed (``_floats_equal``)."""
    from deepdiff.operator import BaseOperator  # noqa: PLC0415 - lazy, with deepdiff itself

    class SignedZeros(BaseOperator):
        def match(self, level: Any) -> bool:
            return type(level.t1) is float and type(level.t2) is float and level.t1 == 0.0 == level.t2

        def give_up_diffing(self, level: Any, diff_instance: Any) -> bool:
            if not _floats_equal(level.t1, level.t2):
                diff_instance.custom_report_result("values_changed", level)
            return True

        def normalize_value_for_hashing(self, parent: Any, obj: Any) -> Any:
            return obj  # set members are hashed as they are (sets are compared whole)

    return SignedZeros()


def _to_change(report: str, level: Any) -> Change:
    if report.startswith("set_item_"):
        # deepdiff names a set element by a meaningless position; report the set as a whole.
        up = level.up
        return Change(tuple(up.path(output_format="list")), "changed", up.t1, up.t2)
    path = tuple(level.path(output_format="list"))
    if report in ("dictionary_item_added", "iterable_item_added"):
        return Change(path, "added", ABSENT, level.t2)
    if report in ("dictionary_item_removed", "iterable_item_removed"):
        return Change(path, "removed", level.t1, ABSENT)
    if report == "values_changed":
        return Change(path, "changed", level.t1, level.t2)
    if report == "type_changes":
        return Change(path, "type_changed", level.t1, level.t2)
    # Anything else (attributes of objects, repetitions) cannot come from config data; dropping it
    # would hide a difference, so it is a bug to be reported.
    raise RuntimeError(f"unexpected deepdiff report {report!r} at {path!r}")


def _tagged(value: Any) -> Any:
    """A hashable key that tells apart values Python calls equal across types (1, 1.0, True;
    (1,) and (True,)): how dict keys and set members are matched."""
    if isinstance(value, tuple):
        return (tuple, tuple(_tagged(v) for v in value))
    if isinstance(value, frozenset):
        return (frozenset, frozenset(_tagged(v) for v in value))
    if isinstance(value, float) and math.isnan(value):
        return (float, float_text(value))  # NaN is not equal to itself; its sign tells two apart
    return (type(value), value)


def strictly_equal(a: Any, b: Any) -> bool:
    """Type-strict structural equality: what ``diff(a, b) == []`` promises."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return _mappings_equal(a, b)
    if isinstance(a, (set, frozenset)):
        return {_tagged(x) for x in a} == {_tagged(x) for x in b}
    if isinstance(a, (list, tuple)):
        return _sequences_equal(a, b)
    return _scalars_equal(a, b)


def _sequences_equal(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b))


def _scalars_equal(a: Any, b: Any) -> bool:
    """``==``, except for floats (``_floats_equal``)."""
    if isinstance(a, float):
        return _floats_equal(a, b)
    return bool(a == b)


def _floats_equal(a: float, b: float) -> bool:
    """``==``, except that NaN equals NaN of the same sign (the same value read twice is no change)
    and ``-0.0`` is not ``0.0``: a program that reads either computes alike but prints and names
    them apart (``f"lr{lr}"`` is ``lr-0.0``), and ``1 / x`` and ``copysign`` tell them apart. So
    does ``copysign`` a NaN's sign (TOML's ``-nan``, Python's ``float("-nan")``), which
    ``tomllib`` and ``float`` keep: ``nan`` and ``-nan`` differ, ``nan`` and ``+nan`` do not."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b) and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def float_text(value: float) -> str:
    """``repr``, except that a NaN with its sign bit set is ``-nan`` (Python prints both as
    ``nan``, so ``nan -> nan`` would hide what changed)."""
    if math.isnan(value) and math.copysign(1.0, value) < 0:
        return "-nan"
    return repr(value)


def _mappings_equal(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    """The same keys by type and value (``1`` and ``True`` are two keys), each holding equal values."""
    b_keys = {_tagged(k): k for k in b}
    return (
        len(a) == len(b)
        and all(_tagged(k) in b_keys for k in a)
        and all(strictly_equal(a[k], b[b_keys[_tagged(k)]]) for k in a)
    )


# paths -------------------------------------------------------------------------------------------

_BARE = re.compile(r"[^.\[\]\"'\s*?]+")


def format_path(path: Sequence[Token]) -> str:
    """``('a', 'b', 0, 'c.d')`` -> ``a.b[0]["c.d"]``; the empty path is ``(root)``."""
    out: list[str] = []
    for token in path:
        if isinstance(token, str) and _BARE.fullmatch(token):
            out.append(("." if out else "") + token)
        elif isinstance(token, str):
            out.append(f"[{json.dumps(token)}]")
        else:
            out.append(f"[{token!r}]")
    return "".join(out) or "(root)"


def parse_glob(glob: str) -> Glob:
    """``glob`` in the one allow-glob grammar (``sweepgen.globs``, linear-time matching), or a
    UserError naming it: dotted keys, ``[N]`` indices, ``*`` within a key, ``**`` any depth,
    ``["a.b"]`` a literal key."""
    try:
        return compile_glob(glob)
    except GlobError as err:
        raise UserError(f"invalid --allow glob {glob!r}: {err.why}", hint=SYNTAX_HINT) from None


# the gate ----------------------------------------------------------------------------------------


def _leaf_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of the leaves under ``value``; an empty mapping or sequence is itself a leaf."""
    if isinstance(value, dict) and value:
        for key, sub in value.items():
            yield from _leaf_paths(sub, prefix + (key,))
    elif isinstance(value, (list, tuple)) and value:
        for index, sub in enumerate(value):
            yield from _leaf_paths(sub, prefix + (index,))
    else:
        yield prefix


def _node_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path in ``value``: leaves and the containers above them."""
    yield prefix
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _node_paths(sub, prefix + (key,))
    elif isinstance(value, (list, tuple)):
        for index, sub in enumerate(value):
            yield from _node_paths(sub, prefix + (index,))


def _is_allowed(change: Change, globs: Sequence[Glob]) -> bool:
    """Allowed when a glob matches its path, or every leaf beneath both sides (a container that
    was added, removed or changed type) matches one: the same verdict as flattening both sides."""
    if _matched(change.path, globs):
        return True
    leaves = [
        leaf
        for side in (change.old, change.new)
        if side is not ABSENT
        for leaf in _leaf_paths(side, change.path)
    ]
    # a leaf equal to change.path (a scalar side) already failed the first test above
    return bool(leaves) and all(_matched(leaf, globs) for leaf in leaves)


def _matched(path: tuple[Any, ...], globs: Sequence[Glob]) -> bool:
    return any(g.match(path) for g in globs)


def parse_globs(globs: Iterable[str]) -> list[Glob]:
    return [parse_glob(glob) for glob in globs]


def unmatched_globs(globs: Iterable[str], *configs: Any) -> dict[str, list[str]]:
    """Globs matching no path in any of ``configs``, each with up to three close path names.

    Such a glob cannot change a verdict (it allows nothing here), so it is not an error: the field
    it names may legitimately be absent from both files. But it may be a typo, so say so.
    """
    globs = list(globs)
    if not globs:  # the common case: no --allow, and no walk over every path of both configs
        return {}
    paths = {p for config in configs for p in _node_paths(config)}
    missing = [glob for glob in globs if not any(parse_glob(glob).match(p) for p in paths)]
    return _close_names(missing, paths) if missing else {}


def _close_names(globs: list[str], paths: set[tuple[Any, ...]]) -> dict[str, list[str]]:
    """Up to three path names close to each glob (the paths named once, only when some glob needs them)."""
    names = sorted({format_path(p) for p in paths if p})
    return {glob: difflib.get_close_matches(glob, names, n=3, cutoff=0.6) for glob in globs}


def disallowed(changes: Iterable[Change], globs: Sequence[Glob]) -> list[Change]:
    """The changes no glob allows; with no globs at all, every change."""
    return [change for change in changes if not _is_allowed(change, globs)]


# helpers -----------------------------------------------------------------------------------------


def _sort_key(path: Sequence[Token]) -> tuple[Any, ...]:
    return tuple((0, t) if type(t) is int else (1, t) if isinstance(t, str) else (2, repr(t)) for t in path)


def jsonable(value: Any) -> Any:
    """A JSON-ready copy; exact types travel separately (``Change.old_type``)."""
    if value is ABSENT:
        return None
    if isinstance(value, dict):
        return {_json_key(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=repr)
    return _jsonable_leaf(value)


def _json_key(key: Any) -> str:
    """A JSON object's keys are strings: any other key as its repr (``1`` and ``True`` stay apart)."""
    return key if isinstance(key, str) else repr(key)


def _jsonable_leaf(value: Any) -> Any:
    """A scalar as JSON holds it: a str subclass as plain text, a not-evaluated node as its source
    and place, a non-finite float and anything JSON has no type for as its repr."""
    if isinstance(value, str):
        return str(value)
    if type(value).__name__ == "NotEvaluated":
        return {"not_evaluated": value.source, "at": value.at}
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else float_text(value)
    return repr(value)
