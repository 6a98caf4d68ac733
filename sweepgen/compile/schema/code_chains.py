"""Reading a trainer's source for the string values its code handles before it raises: the AST shapes
of a closed chain (``if F == "a": ... elif F in ("b", "c"): ... else: raise`` and ``if F not in
(...): raise``) over a field ``F`` (``self.F``, ``args.F``, ``self.args.F``). code_choices joins
what these find across modules; code_guards reads chains that hold under a condition.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from dataclasses import dataclass

_HOLDERS = ({"self"}, {"args"}, {"self", "args"})  # `self.F`, `args.F`, `self.args.F`


@dataclass(frozen=True)
class Closed:
    """The values a field's chains handle, and the line of the first ``raise`` for any other."""

    values: tuple[str, ...]
    line: int


def closed_choices(source: str | ast.AST, fields: Collection[str] | None = None) -> dict[str, Closed]:
    """Per field (of ``fields``; None: any): the string values the code in ``source`` (text, or a
    parsed tree: a module, a class) handles before it raises."""
    found: dict[str, tuple[set[str], int]] = {}
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for chain in unconditional_ifs(node.body):
            closed = closed_chain(chain)
            if closed is None or (fields is not None and closed[0] not in fields):
                continue
            values, line = found.setdefault(closed[0], (set(), closed[2]))
            values |= closed[1]
    return {name: Closed(tuple(sorted(values)), line) for name, (values, line) in found.items()}


def unconditional_ifs(body: list[ast.stmt]) -> Iterator[ast.If]:
    """The ``if`` statements run whenever ``body`` runs: not inside another ``if`` (nor a nested
    function, walked on its own)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield stmt
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Try)):
            yield from unconditional_ifs(stmt.body)


def closed_chain(chain: ast.If) -> tuple[str, set[str], int] | None:
    """(field, the values handled, the raise's line) of a closed chain; None for any other ``if``."""
    return _refuses_outside(chain) or _handles_then_raises(chain)


def _refuses_outside(chain: ast.If) -> tuple[str, set[str], int] | None:
    """``if F not in (...): raise``."""
    refused = _not_in(chain.test)
    if refused is None or not raises(chain.body) or chain.orelse:
        return None
    return refused[0], refused[1], raise_line(chain.body)


def _handles_then_raises(chain: ast.If) -> tuple[str, set[str], int] | None:
    """``if F == "a": ... elif F in ("b", "c"): ... else: raise``."""
    tests, last = chain_of(chain)
    read = [test for test in tests if test is not None]
    fields = {field for field, _ in read}
    if len(read) != len(tests) or len(fields) != 1 or not raises(last.orelse):
        return None
    return fields.pop(), {value for _, values in read for value in values}, raise_line(last.orelse)


def chain_of(first: ast.If) -> tuple[list[tuple[str, set[str]] | None], ast.If]:
    """The tests of an ``if``/``elif`` chain (each read by equals) and its last ``elif``."""
    tests, node = [equals(first.test)], first
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        tests.append(equals(node.test))
    return tests, node


def equals(test: ast.expr) -> tuple[str, set[str]] | None:
    """``F == "a"`` / ``"a" == F`` / ``F in ("a", "b")`` as (F, values)."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq):
        return _among(left, ast.Tuple([right])) or _among(right, ast.Tuple([left]))
    return _among(left, right) if isinstance(op, ast.In) else None


def _not_in(test: ast.expr) -> tuple[str, set[str]] | None:
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn):
        return _among(test.left, test.comparators[0])
    return None


def _among(name: ast.expr, values: ast.expr) -> tuple[str, set[str]] | None:
    """(F, the strings) of a field ``name`` compared with the literal strings ``values``."""
    field, held = field_of(name), strings(values)
    return (field, held) if field and held else None


def field_of(node: ast.expr) -> str | None:
    """``F`` of ``self.F``, ``args.F``, ``self.args.F``; None for anything else."""
    if not isinstance(node, ast.Attribute):
        return None
    holders: list[str] = []
    base = node.value
    while isinstance(base, ast.Attribute):
        holders.insert(0, base.attr)
        base = base.value
    if not isinstance(base, ast.Name):
        return None
    return node.attr if {base.id, *holders} in _HOLDERS and len(holders) <= 1 else None


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def strings(node: ast.expr) -> set[str]:
    """The strings of a literal tuple, list or set of string constants; empty for anything else."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or not node.elts:
        return set()
    values = [_string(e) for e in node.elts]
    return {v for v in values if v is not None} if None not in values else set()


def raises(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def raise_line(body: list[ast.stmt]) -> int:
    return body[-1].lineno
