"""Dotted paths into nested configs: flattening, strict equality, the leaf diff and allow-glob matching.

Configs are trees of mappings; lists and scalars are leaves (an override replaces a whole list).
Equality is *typed*: ``1``, ``1.0`` and ``True`` are different values here, as they are to deepdiff
and to a trainer that checks ``isinstance``; Python's ``==`` would call them equal.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from typing import Any

from sweepgen import globs

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


def _join(prefix: str, key: Any) -> str:
    """The dotted path of ``key`` under ``prefix`` (the top level: just the key)."""
    return f"{prefix}.{key}" if prefix else str(key)


def all_paths(tree: Any, prefix: str = "") -> list[str]:
    """Every mapping key path in ``tree`` (inner nodes and leaves), in document order."""
    out: list[str] = []
    if isinstance(tree, dict):
        for key, value in tree.items():
            path = _join(prefix, key)
            out.append(path)
            out.extend(all_paths(value, path))
    return out


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Leaf path -> value. An empty mapping is itself a leaf (so adding/removing it shows)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        path = _join(prefix, key)
        if isinstance(value, dict) and value:
            out.update(flatten(value, path))
        else:
            out[path] = value
    return out


def get(tree: Any, path: tuple[str, ...] | str, default: Any = MISSING) -> Any:
    if isinstance(path, str):
        path = tuple(path.split("."))
    node = tree
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def same(a: Any, b: Any) -> bool:
    """Typed deep equality: types must match exactly at every level (1 != 1.0 != True)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (dict, list, tuple)):
        return _same_items(a, b)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)  # b is a float too (same type)
    return bool(a == b)


def _same_items(a: Any, b: Any) -> bool:
    """``same`` for two containers of one type."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return len(a) == len(b) and all(map(same, a, b))


def diff_paths(a: Any, b: Any, prefix: str = "") -> Iterator[str]:
    """The minimal paths where ``a`` and ``b`` differ: a key added or removed, or a value changed.

    Recurses only into mappings present on both sides (lists are compared whole), which is the
    same granularity deepdiff reports at once its paths are cut at the first list index.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            path = _join(prefix, key)
            if key not in b:
                yield path
            else:
                yield from diff_paths(a[key], b[key], path)
        for key in b:
            if key not in a:
                yield _join(prefix, key)
    elif not same(a, b):
        yield prefix


def diff_at(base: dict[str, Any], variant: dict[str, Any], touched: tuple[tuple[str, ...], ...]) -> set[str]:
    """Where ``variant`` differs from ``base``, looking only under the paths overrides touched.

    Everything else is shared by reference with the base (copy-on-write), so it cannot differ; this
    keeps the gate O(overrides) per variant instead of O(leaves).
    """
    found: set[str] = set()
    for path, dotted in _outermost(touched):
        a = get(base, path)
        b = get(variant, path)
        if a is MISSING or b is MISSING:
            if a is not b:
                found.add(dotted)
        elif isinstance(a, dict) and isinstance(b, dict):
            found.update(diff_paths(a, b, dotted))
        elif not same(a, b):  # a leaf, the common case: no generator
            found.add(dotted)
    return found


@functools.lru_cache(maxsize=4096)  # every grid point of a variant touches the same paths
def _outermost(touched: tuple[tuple[str, ...], ...]) -> tuple[tuple[tuple[str, ...], str], ...]:
    """Drop paths under another touched path (their differences are found from the outer one); each
    kept path with its dotted spelling."""
    ordered = sorted(set(touched), key=len)
    kept: list[tuple[str, ...]] = []
    for path in ordered:
        if not any(path[: len(k)] == k for k in kept):
            kept.append(path)
    return tuple((path, ".".join(path)) for path in kept)


def matches(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Does the dotted ``path`` match one of the allow globs (grammar: sweepgen.globs)?"""
    tokens = globs.dotted(path)
    return any(globs.compile_glob(p).match(tokens) for p in patterns)


def under(path: str, prefixes: set[str] | frozenset[str]) -> bool:
    """Is ``path`` one of ``prefixes`` or below one of them?"""
    if path in prefixes:
        return True
    parts = path.split(".")
    return any(".".join(parts[:i]) in prefixes for i in range(1, len(parts)))


def too_deep(value: Any, limit: int) -> bool:
    """True when ``value`` nests deeper than ``limit`` (checked without recursion)."""
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        node, depth = todo.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            todo.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            todo.extend((v, depth + 1) for v in node)
    return False
