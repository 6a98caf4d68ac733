"""The values the Python config reader works with, and the helpers every part of it shares.

``CallData`` is a call the reader must not run (its name and evaluated arguments); a ``Function``
is a function defined in the file (called with known arguments, else kept as source); ``Unknown``
is raised for an expression whose value cannot be known, ``Return`` carries a ``return``.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Callable
from typing import Any

from sweepgen.paths import same
from sweepgen.readers.model import NotEvaluated, tree_size

ImportBase = Callable[[str, int, int], dict[str, Any]]  # (module, level, line) -> the base's names
LOOP_LIMIT = 100_000
SIZE_LIMIT = 1_000_000
# A shared object is walked once per reference by `==`, `str`, `sorted`, ...: `b = [a] * 1000` of
# `a = [0] * 1000` is a thousand items that such a call walks as a million. Values past this, counted
# as the call walks them (sweepgen.readers.model.tree_size), are kept as source, never walked.
WORK_LIMIT = 2_000_000


def fits_work(*values: Any) -> bool:
    """Would a builtin or comparison that walks ``values`` stay within ``WORK_LIMIT``?"""
    return tree_size(values, WORK_LIMIT) <= WORK_LIMIT


class CallData(dict):  # type: ignore[type-arg]
    """A call to something the reader must not run: its name and evaluated arguments."""


class KeptView(NotEvaluated):
    """A dict view kept (``b = a.keys()``), live as Python's is: it reads the dict it was taken of,
    as that dict holds now, whatever name holds it later (``a = {}`` after the view leaves the view
    on the old dict, and a key added to that dict before still shows in it). Its source is written
    each time it is read, so a part not evaluated that reads the view, and the view itself at the
    end, show the dict's values then. A generator expression, ``zip``, ``enumerate`` and
    ``reversed`` kept are read so too, over the objects they were given."""

    __slots__ = ("call", "held", "text")
    __hash__ = None  # type: ignore[assignment]  # unhashable, as Python's views are

    def __init__(self, call: str, held: Any, text: Callable[[Any], str], where: str, line: int) -> None:
        self.call, self.held, self.text = call, held, text
        self.where, self.line = where, line

    @property
    def source(self) -> str:  # type: ignore[override]
        return f"{self.call} of {self.text(self.held)}{_key_order(self.held)}"


def _key_order(held: Any) -> str:
    """A dict's keys in the order a view iterates them, where that is not the order its text
    writes them in (sorted): ``a.pop('x'); a['x'] = 0`` moves x last, and a view sees it."""
    if not isinstance(held, dict):
        return ""
    keys = [value_text(key) for key in held]
    return "" if keys == sorted(keys) else f" (keys in order {', '.join(keys)})"


def frozen_views(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """``value`` with each ``KeptView`` in it as the plain not-evaluated part it reads as now: what
    the reader hands out when the file is read (nothing changes a dict after that)."""
    memo = {} if memo is None else memo
    if isinstance(value, KeptView):
        return NotEvaluated(value.source, value.where, value.line)
    if not isinstance(value, (dict, list, tuple, set, frozenset)) or id(value) in memo:
        return memo.get(id(value), value)
    memo[id(value)] = value
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = frozen_views(item, memo)
    elif isinstance(value, list):
        value[:] = [frozen_views(item, memo) for item in value]
    else:
        memo[id(value)] = _frozen_items(value, memo)
    return memo[id(value)]


def _frozen_items(value: Any, memo: dict[int, Any]) -> Any:
    """A tuple or set with its views frozen: a new one where any item was one, else itself."""
    items = [frozen_views(item, memo) for item in value]
    changed = any(a is not b for a, b in zip(items, value))
    return type(value)(items) if changed else value


NO_DEFAULT: Any = object()  # a keyword-only parameter without a default


class Function:
    """A function the config defines: its code, its source, and its defaults, which Python
    evaluates once, where the ``def`` runs (a later rebinding of a name they read does not change
    them, and a mutable default is shared by every call)."""

    def __init__(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        source: NotEvaluated,
        defaults: list[Any] | None = None,
        kw_defaults: list[Any] | None = None,
    ) -> None:
        self.node = node
        self.source = source
        self.defaults = defaults or []
        self.kw_defaults = kw_defaults or []

    def __eq__(self, other: object) -> bool:
        """One ``def``, the same defaults and text: a branch's copy of it it left alone is no change."""
        return (
            isinstance(other, Function)
            and other.node is self.node
            and same((self.defaults, self.kw_defaults), (other.defaults, other.kw_defaults))
            and self.source.source == other.source.source
        )

    def __hash__(self) -> int:
        return id(self.node)

    def __deepcopy__(self, memo: dict[int, Any]) -> Function:
        if not self.defaults and not self.kw_defaults:
            return self  # code, not data: a branch run on a copy of the state shares it
        # the defaults are data a call may change: a branch run on a copy gets its own
        twin = Function(self.node, self.source)
        memo[id(self)] = twin
        twin.defaults = copy.deepcopy(self.defaults, memo)
        twin.kw_defaults = copy.deepcopy(self.kw_defaults, memo)
        kept = self.source
        if isinstance(kept, KeptView):  # its text reads the defaults as copied (a view is not copied)
            twin.source = KeptView(
                kept.call, copy.deepcopy(kept.held, memo), kept.text, kept.where, kept.line
            )
        return twin


class Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class Unknown(Exception):
    """An expression whose value cannot be known here."""


def merge_into(base: dict[Any, Any], update: dict[Any, Any]) -> None:
    for key, value in update.items():
        if key == "_delete_":
            continue
        current = base.get(key)
        if type(value) is dict and type(current) is dict and value.get("_delete_") is not True:
            merge_into(current, value)
        else:
            base[key] = _without_delete(value)


def _without_delete(value: Any) -> Any:
    """A mapping that replaces (``_delete_=True``, or one with nothing to merge into) without the
    marker itself."""
    return {k: v for k, v in value.items() if k != "_delete_"} if type(value) is dict else value


def raise_unknown() -> Any:
    raise Unknown


def compare(op: ast.cmpop, a: Any, b: Any) -> bool:
    if not fits_work(a, b):
        raise Unknown
    table: dict[type, Callable[[Any, Any], bool]] = {
        ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y, ast.Lt: lambda x, y: x < y,
        ast.LtE: lambda x, y: x <= y, ast.Gt: lambda x, y: x > y, ast.GtE: lambda x, y: x >= y,
        ast.In: lambda x, y: x in y, ast.NotIn: lambda x, y: x not in y,
        ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y,
    }  # fmt: skip
    return bool(table[type(op)](a, b))


def known(value: Any) -> bool:
    """Plain data all the way down: no reference, call, or not-evaluated part. Each shared object is
    looked at once, so a value that repeats one list a million times costs a million steps, not more."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in (int, float, str, bool, complex, bytes, type(None), range, slice):
            continue
        if kind not in (list, tuple, set, frozenset, dict):
            return False
        if id(item) in seen:
            continue
        seen.add(id(item))
        stack.extend(item if kind is not dict else (x for pair in item.items() for x in pair))
    return True


def known_key(value: Any) -> bool:
    if type(value) is tuple:
        return all(known_key(item) for item in value)
    return type(value) in (str, bytes, int, float, complex, bool, type(None))


def is_data(value: Any) -> bool:
    return type(value) in (dict, list)


def dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def normalised(node: ast.AST) -> str:
    # ast.unparse normalises layout, quoting and comments away; docstrings are dropped first: taken
    # out of the reader's tree for the unparse and put back (a deep copy cost more than the unparse)
    holders = [sub for sub in ast.walk(node) if _has_docstring(sub)]
    bodies = [sub.body for sub in holders]  # type: ignore[attr-defined]
    try:
        for sub, body in zip(holders, bodies):
            sub.body = body[1:]  # type: ignore[attr-defined]
        return ast.unparse(node)
    finally:
        for sub, body in zip(holders, bodies):
            sub.body = body  # type: ignore[attr-defined]


def _has_docstring(node: ast.AST) -> bool:
    """A body that starts with a docstring and holds more than it (a lone docstring stays)."""
    body = getattr(node, "body", None)
    return isinstance(body, list) and len(body) > 1 and is_docstring(body[0])


def is_call_or_expr(mapping: Any) -> bool:
    """A value that stands for a call or an unevaluated expression, never merged into."""
    return isinstance(mapping, (CallData, NotEvaluated))


def is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


_FIXED_HASH = (int, float, bool, type(None))  # hashes Python does not salt per process


def hash_ordered(value: Any) -> bool:
    """Does ``value`` hold (at any depth) a set whose iteration order the running program draws
    anew each run? A set of strings (or of anything but numbers and None) is iterated in the order
    of their hashes, salted per process (PYTHONHASHSEED): ``list(s)``, ``",".join(s)``, ``str(s)``
    give another order in the program than in this reader, so such a result is never a value."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if not isinstance(item, (dict, list, tuple, set, frozenset)) or id(item) in seen:
            continue
        seen.add(id(item))
        if _salted_order(item):
            return True
        stack.extend([*item.keys(), *item.values()] if isinstance(item, dict) else item)
    return False


def _salted_order(item: Any) -> bool:
    """A set of two or more members, one of them hashed with the per-process salt."""
    salted = isinstance(item, (set, frozenset)) and len(item) > 1
    return salted and any(type(member) not in _FIXED_HASH for member in item)


_SCALARS = (int, float, complex, str, bytes, bool, type(None))


def value_text(value: Any) -> str:
    """A value as text, the same for the same value wherever it was built (a mapping's keys in a
    fixed order, a kept part by its source), each part past 200 characters named by its digest:
    what a part not evaluated read, written beside its source. Linear in the distinct objects:
    a list held a thousand times is written once."""
    return _text(value, {}, set())


def _short(text: str) -> str:
    if len(text) <= 200:
        return text
    return "<sha256 " + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16] + ">"


def _text(value: Any, memo: dict[int, str], active: set[int]) -> str:
    if type(value).__name__ == "Ref":
        return _short(f"<ref {value}>")
    if isinstance(value, _SCALARS):
        return _short(repr(value))
    if isinstance(value, NotEvaluated):
        return _short(f"<{value.source}>")
    key = id(value)
    if key in memo:
        return memo[key]
    if key in active:
        return "<cycle>"
    active.add(key)
    try:
        memo[key] = _short(_container_text(value, memo, active))
    finally:
        active.discard(key)
    return memo[key]


def _container_text(value: Any, memo: dict[int, str], active: set[int]) -> str:
    if isinstance(value, dict):
        items = sorted(f"{_text(k, memo, active)}: {_text(v, memo, active)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_text(v, memo, active) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_text(v, memo, active) for v in value)) + "}"
    return f"<{type(value).__name__}>"
