"""The constants a rendered Python config gives by name, for the type check (value_types.py): a
keyword argument (``GRPOConfig(lr=0.1)``), a string-keyed dict entry (``{"lr": 0.1}``), an
assignment or a class field with a default (``lr = 0.1``, ``self.lr = 0.1``, ``lr: float = 0.1``).
A name given twice is left out: which one the template wrote a value into is not known."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

_NOT_LITERAL = object()
_SCALARS = (str, bool, int, float, type(None))


def literal_text(text: str) -> Any:
    """What ``text`` written bare in Python is: a number, boolean or None, else the text itself."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, _SCALARS) and not isinstance(value, str) else text


def named_constants(text: str) -> tuple[dict[str, Any], Callable[[tuple[Any, ...]], int]]:
    """({name: constant}, the line of a (name,) path) for every name given one constant."""
    given: dict[str, list[tuple[Any, int]]] = {}
    for name, node in _named(ast.parse(text)):
        value = _constant(node)
        if value is not _NOT_LITERAL:
            given.setdefault(name, []).append((value, node.lineno))
    once = {name: found[0] for name, found in given.items() if len(found) == 1}
    return {name: value for name, (value, _) in once.items()}, lambda path: once[path[-1]][1]


def _named(tree: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    for node in ast.walk(tree):
        reader = _READERS.get(type(node))
        if reader is not None:
            yield from reader(node)


def _keyword(node: Any) -> Iterator[tuple[str, ast.expr]]:
    if node.arg is not None:
        yield node.arg, node.value


def _assigned(node: Any) -> Iterator[tuple[str, ast.expr]]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if node.value is not None:
        yield from ((_name_of(t), node.value) for t in targets if _name_of(t))


def _dict_entries(node: ast.Dict) -> Iterator[tuple[str, ast.expr]]:
    for key, value in zip(node.keys, node.values):
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            yield key.value, value


def _name_of(target: ast.expr) -> str:
    if isinstance(target, ast.Name):
        return target.id
    return target.attr if isinstance(target, ast.Attribute) else ""


def _constant(node: ast.expr) -> Any:
    """A scalar constant (a negative number included); _NOT_LITERAL for anything else."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL
    return value if isinstance(value, _SCALARS) else _NOT_LITERAL


_READERS: dict[type, Callable[[Any], Iterator[tuple[str, ast.expr]]]] = {
    ast.keyword: _keyword,
    ast.Dict: _dict_entries,
    ast.Assign: _assigned,
    ast.AnnAssign: _assigned,
}
