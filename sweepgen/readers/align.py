"""Alignment instead of position: list items, and the repeated commands of a script, matched by
content, so that one inserted row, argument or command is one change, not a shift of every later one.

Two sequences are aligned as a longest common subsequence of their items' signatures (difflib's
``SequenceMatcher``, the standard library's, without its junk heuristic): equal items pair up; a
run that differs on both sides pairs its items in order (an edited item is one change inside it)
and what is left over was inserted or removed. The common head and tail are matched first, so the
usual edit (one item inserted, removed or changed) costs a linear scan; a middle too large to
align cheaply is paired by position instead, which is never wrong, only noisier.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Hashable, Sequence
from typing import Any

Pair = tuple[int | None, int | None]  # (old index, new index); None: the item is only on one side

_MAX_CELLS = 4_000_000  # old x new items of a middle aligned by LCS; past it, by position
_OCCURRENCE = re.compile(r"(.*) #([0-9]+)")


def signature(value: Any) -> Hashable:
    """A hashable stand-in equal for strictly equal values (types count: 1, 1.0 and True differ)."""
    if isinstance(value, dict):
        return (dict, frozenset((signature(k), signature(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(signature(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return (type(value), frozenset(signature(v) for v in value))
    if isinstance(value, float):
        return _float_signature(value)
    try:
        hash(value)
    except TypeError:
        return (type(value), repr(value))
    return (type(value), value)


def _float_signature(value: float) -> Hashable:
    """`-0.0` and `0.0` differ, and `nan` and `-nan`; two NaNs of one sign are equal, as in
    diff._floats_equal."""
    if value == 0.0 or math.isnan(value):
        return (float, repr(value), math.copysign(1.0, value))
    return (float, value)


def align(old: Sequence[Any], new: Sequence[Any]) -> list[Pair]:
    """Which item of ``new`` each item of ``old`` corresponds to, in order."""
    a = [signature(v) for v in old]
    b = [signature(v) for v in new]
    head, tail = _common_ends(a, b)
    pairs: list[Pair] = [(i, i) for i in range(head)]
    pairs += _middle(a[head : len(a) - tail], b[head : len(b) - tail], head)
    pairs += [(len(a) - tail + k, len(b) - tail + k) for k in range(tail)]
    return pairs


def _common_ends(a: list[Any], b: list[Any]) -> tuple[int, int]:
    """How many items the two share at the start, then at the end (never overlapping the start)."""
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _middle(a: list[Any], b: list[Any], offset: int) -> list[Pair]:
    """The differing middle (starting at ``offset`` on both sides) paired by difflib's matching
    blocks; in order when a side is empty or the table would pass ``_MAX_CELLS``."""
    if len(a) * len(b) > _MAX_CELLS or not a or not b:
        return _in_order(offset, len(a), offset, len(b))
    pairs: list[Pair] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += [(offset + i, offset + j) for i, j in zip(range(i1, i2), range(j1, j2))]
        else:
            pairs += _in_order(offset + i1, i2 - i1, offset + j1, j2 - j1)
    return pairs


def _in_order(i: int, n: int, j: int, m: int) -> list[Pair]:
    """A run that differs: items paired in order, the longer side's rest inserted or removed."""
    both = min(n, m)
    out: list[Pair] = [(i + k, j + k) for k in range(both)]
    out += [(i + k, None) for k in range(both, n)]
    out += [(None, j + k) for k in range(both, m)]
    return out


def realign_occurrences(old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """Keys of ``new`` renamed so its repeated entries (``train.py``, ``train.py #2``, ...) meet the
    entries of ``old`` they correspond to by content, not by their number: {new key: key to use}.
    An entry only ``new`` has keeps its own number, or is marked ``(inserted)`` when that number
    now names an entry ``old`` has."""
    old_families = _families(old)
    renamed: dict[str, str] = {}
    for base, new_keys in _families(new).items():
        old_keys = old_families.get(base, [])
        if len(new_keys) < 2 and len(old_keys) < 2:
            continue
        pairs = align([old[k] for k in old_keys], [new[k] for k in new_keys])
        renamed.update(_renamed(old_keys, new_keys, pairs))
    return {k: v for k, v in renamed.items() if k != v}


def same_order(old: dict[str, Any], new: dict[str, Any], common: set[str]) -> bool:
    """Whether the entries both sides have come in one order, once entries of one name and identical
    content may stand for each other: which of two identical runs of ``train.py`` is "the same"
    is arbitrary, so inserting a third before them is an insertion, not a reordering."""
    tokens = [
        [_order_token(k, side, other, common) for k in side] for side, other in ((old, new), (new, old))
    ]
    if len(tokens[0]) * len(tokens[1]) > _MAX_CELLS:
        return False  # too large to match cheaply: the order as the keys give it
    matcher = difflib.SequenceMatcher(None, tokens[0], tokens[1], autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) >= len(common)


def _order_token(key: str, side: dict[str, Any], other: dict[str, Any], common: set[str]) -> Hashable:
    """An entry edited between the sides stands for itself; any other, for its name and content."""
    mine = signature(side[key])
    if key in common and signature(other[key]) != mine:
        return ("edited", key)
    found = _OCCURRENCE.fullmatch(key)
    return (found.group(1) if found else key, mine)


def _renamed(old_keys: list[str], new_keys: list[str], pairs: list[Pair]) -> dict[str, str]:
    """{new key: key to use} in one family: the old entry's key it meets, else its own."""
    taken = set(old_keys)
    out: dict[str, str] = {}
    for i, j in pairs:
        if j is None:
            continue
        key = new_keys[j]
        out[key] = old_keys[i] if i is not None else key if key not in taken else f"{key} (inserted)"
    return out


def _families(mapping: dict[str, Any]) -> dict[str, list[str]]:
    """Keys grouped by the name they repeat, in occurrence order."""
    families: dict[str, list[tuple[int, str]]] = {}
    for key in mapping:
        found = _OCCURRENCE.fullmatch(key) if isinstance(key, str) else None
        base, number = (found.group(1), int(found.group(2))) if found else (key, 1)
        families.setdefault(base, []).append((number, key))
    return {base: [key for _, key in sorted(keys)] for base, keys in families.items()}


ARGV_ORDER = "@argv order"  # cmdline's: the flags of a command in the order its argv holds them


def reconcile_argv_orders(old: Any, new: Any) -> None:
    """Each command's ``@argv order`` (the flags a program reading ``sys.argv`` sees, in order)
    compared as the order of the flags both sides give: where that order is one, the key is
    dropped on both sides (an inserted or removed flag is only that change); where it differs, each
    side keeps its common flags in its order, one value (one move is one change). In place, over
    every mapping both sides hold at one path."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    if ARGV_ORDER in old or ARGV_ORDER in new:
        _reconcile_one(old, new)
    for key in old.keys() & new.keys():
        reconcile_argv_orders(old[key], new[key])


def _reconcile_one(old: dict[str, Any], new: dict[str, Any]) -> None:
    kept = _common_orders(old.pop(ARGV_ORDER, None), new.pop(ARGV_ORDER, None))
    if kept[0] != kept[1]:
        old[ARGV_ORDER], new[ARGV_ORDER] = (_one_value(order) for order in kept)


def _common_orders(old: Any, new: Any) -> list[list[str]]:
    """Each side's flags that both sides give, in its order."""
    flags = [value if isinstance(value, list) else [] for value in (old, new)]
    common = set(flags[0]) & set(flags[1])
    return [[str(flag) for flag in side if flag in common] for side in flags]


def _one_value(names: list[str]) -> str | list[str]:
    """The names joined, one value (one move is one change), or the list where a name holds the
    separator (two orders never read alike)."""
    return names if any(", " in name for name in names) else ", ".join(names)
