"""Reading a trainer's source for the string values its code handles before it raises: the AST shapes
of a closed chain (``if F == "a": ... elif F in ("b", "c"): ... else: raise`` and ``if F not in
(...): raise``) over a field ``F`` (``self.F``, ``args.F``, ``self.args.F``). code_choices joins
what these find across modules; code_guards reads chains that hold under a condition.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import TypeGuard

_HOLDERS = ({"self"}, {"args"}, {"self", "args"})  # `self.F`, `args.F`, `self.args.F`
Subject = Callable[[ast.expr], "str | None"]  # the field a compared expression stands for, if any


def field_of(node: ast.expr | None) -> str | None:
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


@dataclass(frozen=True)
class Closed:
    """The values a field's chains handle, and the line of the first ``raise`` for any other."""

    values: tuple[str, ...]
    line: int


def closed_choices(source: str | ast.AST, fields: Collection[str] | None = None) -> dict[str, Closed]:
    """Per field (of ``fields``; None: any): the string values the code in ``source`` (text, or a
    parsed tree: a module, a class) handles before it raises."""
    tree = ast.parse(source) if isinstance(source, str) else source
    chains = (chain for body in function_bodies(tree) for chain in unconditional_ifs(body))
    found: dict[str, tuple[set[str], int]] = {}
    for field, values, line in filter(None, map(closed_chain, chains)):
        if fields is None or field in fields:
            found.setdefault(field, (set(), line))[0].update(values)
    return {name: Closed(tuple(sorted(values)), line) for name, (values, line) in found.items()}


def function_bodies(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    """Each function's own statements (a nested function is one of them, walked on its own)."""
    return (n.body for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def closed_items(source: str | ast.AST) -> dict[str, Closed]:
    """Per list field: the string values the code handles for each of its
    items before it raises. DPO's ``loss_type`` is a list, and its loss runs ``for loss_type, weight in
    zip(self.loss_types, ...): if loss_type == "sigmoid": ... else: raise``: a chain, at a loop
    body's own level, over the name an unconditional ``for`` binds to a field's items (``for t in
    self.F``, ``for t, w in zip(self.F, ...)``, ``for i, t in enumerate(self.F)``). A field the code
    stores once under another name (``self.loss_types = args.loss_type``) counts as that field."""
    tree = ast.parse(source) if isinstance(source, str) else source
    aliases = _aliases(tree)
    found: dict[str, tuple[set[str], int]] = {}
    for field, values, line in (c for loop in _loops(tree) for c in _loop_closes(loop, aliases)):
        found.setdefault(field, (set(), line))[0].update(values)
    return {name: Closed(tuple(sorted(values)), line) for name, (values, line) in found.items()}


def _loops(tree: ast.AST) -> Iterator[ast.For]:
    """The ``for`` loops that run whenever their function does."""
    return (loop for body in function_bodies(tree) for loop in _unconditional_loops(body))


def _loop_closes(loop: ast.For, aliases: dict[str, str]) -> Iterator[tuple[str, set[str], int]]:
    """(field, values, line) of each closed chain in ``loop``'s body over a name bound to items."""
    for name, field in _item_names(loop, aliases).items():
        for chain in unconditional_ifs(loop.body):
            closed = closed_chain(chain, _named(name, field))
            if closed is not None:
                yield closed


def _named(name: str, field: str) -> Subject:
    """The loop variable ``name`` read as the items of ``field``."""
    return lambda node: field if isinstance(node, ast.Name) and node.id == name else None


def _unconditional_loops(body: list[ast.stmt]) -> Iterator[ast.For]:
    for stmt in body:
        if isinstance(stmt, ast.For):
            yield stmt
        if isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Try)):
            yield from _unconditional_loops(stmt.body)


def _item_names(loop: ast.For, aliases: dict[str, str]) -> dict[str, str]:
    """Loop variable -> the field whose items it takes."""
    names = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
    out = {}
    for slot, arg in _slots(loop.iter) if isinstance(loop.target, ast.Tuple) else [(0, loop.iter)]:
        field, target = field_of(arg), names[slot] if slot < len(names) else None
        if field and isinstance(target, ast.Name):
            out[target.id] = aliases.get(field, field)
    return out


def _slots(call: ast.expr) -> list[tuple[int, ast.expr]]:
    """(the place in the loop's target, the iterable) of ``zip(a, b)`` and ``enumerate(a)``."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return []
    places = {"zip": list(enumerate(call.args)), "enumerate": [(1, a) for a in call.args[:1]]}
    return places.get(call.func.id, [])


def _aliases(tree: ast.AST) -> dict[str, str]:
    """``X`` -> ``F`` where the code assigns ``self.X = args.F`` (or ``self.args.F``) and ``self.X``
    nowhere else."""
    stored: dict[str, list[str | None]] = {}
    for node in ast.walk(tree):
        for target, value in _self_assignments(node):
            stored.setdefault(target, []).append(field_of(value))
    return {name: one for name, sources in stored.items() if (one := _one(name, sources))}


def _one(name: str, sources: list[str | None]) -> str | None:
    """The one field ``self.<name>`` is ever set to, if it is set once, to another field."""
    return sources[0] if len(sources) == 1 and sources[0] != name else None


def _self_assignments(node: ast.AST) -> list[tuple[str, ast.expr | None]]:
    """(X, the value: None where the statement sets no one value) of each ``self.X`` it sets (a
    ``for``, an augmented or annotated assignment counts too, with no value)."""
    value = node.value if isinstance(node, ast.Assign) else None
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return [(t.attr, value) for t in targets if _on_self(t)]


def _on_self(node: object) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def unconditional_ifs(body: list[ast.stmt]) -> Iterator[ast.If]:
    """The ``if`` statements run whenever ``body`` runs: not inside another ``if`` (nor a nested
    function, walked on its own)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield stmt
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Try)):
            yield from unconditional_ifs(stmt.body)


def closed_chain(chain: ast.If, subject: Subject = field_of) -> tuple[str, set[str], int] | None:
    """(field, the values handled, the raise's line) of a closed chain; None for any other ``if``.
    ``subject`` reads the compared side (default field_of: ``self.F``, ``args.F``)."""
    return _refuses_outside(chain, subject) or _handles_then_raises(chain, subject)


def _refuses_outside(chain: ast.If, subject: Subject) -> tuple[str, set[str], int] | None:
    """``if F not in (...): raise``."""
    refused = _not_in(chain.test, subject)
    if refused is None or not raises(chain.body) or chain.orelse:
        return None
    return refused[0], refused[1], raise_line(chain.body)


def _handles_then_raises(chain: ast.If, subject: Subject) -> tuple[str, set[str], int] | None:
    """``if F == "a": ... elif F in ("b", "c"): ... else: raise``."""
    tests, last = chain_of(chain, subject)
    field = _one_field(tests)
    if field is None or not raises(last.orelse):
        return None
    return field, {value for test in tests if test for value in test[1]}, raise_line(last.orelse)


def _one_field(tests: list[tuple[str, set[str]] | None]) -> str | None:
    """The field every test of a chain compares, if each compares the same one."""
    fields = {test[0] if test else None for test in tests}
    return fields.pop() if len(fields) == 1 else None


def chain_of(first: ast.If, subject: Subject = field_of) -> tuple[list[tuple[str, set[str]] | None], ast.If]:
    """The tests of an ``if``/``elif`` chain (each read by equals) and its last ``elif``."""
    tests, node = [equals(first.test, subject)], first
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        tests.append(equals(node.test, subject))
    return tests, node


def equals(test: ast.expr, subject: Subject = field_of) -> tuple[str, set[str]] | None:
    """``F == "a"`` / ``"a" == F`` / ``F in ("a", "b")`` as (F, values)."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq):
        return _among(left, ast.Tuple([right]), subject) or _among(right, ast.Tuple([left]), subject)
    return _among(left, right, subject) if isinstance(op, ast.In) else None


def _not_in(test: ast.expr, subject: Subject) -> tuple[str, set[str]] | None:
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn):
        return _among(test.left, test.comparators[0], subject)
    return None


def _among(name: ast.expr, values: ast.expr, subject: Subject) -> tuple[str, set[str]] | None:
    """(F, the strings) of a field ``name`` compared with the literal strings ``values``."""
    field, held = subject(name), strings(values)
    return (field, held) if field and held else None


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
