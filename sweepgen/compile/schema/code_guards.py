"""Closed chains that hold under a condition, or that a trainer reaches through an object it builds.

Two shapes in TRL 1.16 that code_chains alone cannot read, each a typo TRL accepts until the run is
under way:

- GRPO's ``scale_rewards`` chain raises only inside ``if self.multi_objective_aggregation ==
  "sum_then_normalize":`` (the default): under that value the field is closed, under the other it
  is never read. A chain at the own level of one branch of a switch over another field ``G``
  (``if G == "a": ... elif G == "b": ...``), or of ``if G:`` (a flag), holds when ``G`` has that
  branch's values.
- ``vllm_mode`` is handed to ``VLLMGeneration(mode=args.vllm_mode)`` (under ``if self.use_vllm:``),
  which stores it as ``self.mode`` and closes that (``trl/generation/vllm_generation.py``). A call,
  at a function's own level or of such a branch, of a class the module imports by name, passing a
  field as a keyword the class's ``__init__`` stores once as ``self.A``, closes the field with the
  values the class's chains over ``self.A`` handle.

- GRPO's ``vllm_importance_sampling_mode`` chain raises only inside ``if self.use_vllm and
  self.vllm_importance_sampling_correction:``: a condition over two fields. A test that is a
  conjunction (``and``) of such tests (a flag, or ``G == "a"`` / ``G in (...)``), or a branch inside
  another branch, holds when every one of its parts does: the finding's condition lists them all.

A condition with any part that cannot be read that way (``if self.beta > 0:``, an ``or``) is never
read: the finding would claim more than the code says. Everything is read from source; nothing is
imported or run.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeGuard

from sweepgen.compile.schema.code_chains import (
    chain_of,
    closed_chain,
    closed_choices,
    equals,
    field_of,
    unconditional_ifs,
)

Part = tuple[str, tuple[str | bool, ...]]  # (field G, the values of G under which a finding holds)
When = tuple[Part, ...]  # every part holds (sorted by field: one condition, one key)


@dataclass(frozen=True)
class Found:
    """A field closed to ``values`` (always, or ``when`` G has one of its values), the raise at
    ``module``'s ``line``."""

    field: str
    values: tuple[str, ...]
    module: str
    line: int
    when: When | None = None


Tree = Callable[[str], ast.Module | None]  # a module's parsed source (cached by the caller)


def guarded(module: str, tree: Tree) -> list[Found]:
    """What ``module``'s functions close under a branch's condition, and through the classes they
    build (at their own level, or a branch's)."""
    parsed = tree(module)
    if parsed is None:
        return []
    imported = _imported_names(module, parsed)
    out: list[Found] = []
    for function in _functions(parsed):
        out += _built(function.body, None, imported, tree)
        out += _under(module, function.body, (), imported, tree)
    return out


def _under(
    module: str, body: list[ast.stmt], held: When, imported: dict[str, tuple[str, str]], tree: Tree
) -> list[Found]:
    """What the branches of ``body``'s own ``if`` statements close, each under ``held`` and its own
    condition, and the branches inside those (the conditions joined)."""
    out: list[Found] = []
    for chain in unconditional_ifs(body):
        for part, inner in _branches(chain):
            when = _joined(held, part)
            if when is None:
                continue
            out += _closed_under(module, inner, when)
            out += _built(inner, when, imported, tree)
            out += _under(module, inner, when, imported, tree)
    return out


def _joined(held: When, more: When) -> When | None:
    """Both conditions; None where they name one field twice (``if G == "a": if G == "b":``: never
    both, or the same test again, read once already)."""
    fields = [field for field, _ in (*held, *more)]
    return tuple(sorted((*held, *more))) if len(set(fields)) == len(fields) else None


def _functions(node: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    return (n for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _branches(chain: ast.If) -> Iterator[tuple[When, list[ast.stmt]]]:
    """Each branch of a switch over one field (its values, its body), or the body of ``if G:`` or of
    ``if A and B == "b":`` (every part a flag or a comparison)."""
    parts = _conjunction(chain.test)
    if parts is not None and (len(parts) > 1 or parts[0][1] == (True,)):
        return iter([(parts, chain.body)])
    return _switch(chain)


def _switch(chain: ast.If) -> Iterator[tuple[When, list[ast.stmt]]]:
    """``if G == "a": ... elif G in ("b", "c"): ...``: each branch's values, and its body."""
    tests, _ = chain_of(chain)
    read = [t for t in tests if t is not None]
    if len(read) == len(tests) and len({field for field, _ in read}) == 1:
        for (field, values), node in zip(read, _links(chain), strict=True):
            yield ((field, tuple(sorted(values))),), node.body


def _conjunction(test: ast.expr) -> When | None:
    """``G`` / ``G == "a"`` / ``A and B in ("b", "c")`` as its parts, each (field, values); None
    where any part is read no such way (a field named twice is _joined's to refuse)."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    parts = [_part(one) for one in tests]
    return tuple(sorted(p for p in parts if p is not None)) if None not in parts else None


def _part(test: ast.expr) -> Part | None:
    flag, compared = field_of(test), equals(test)
    if flag is not None:
        return flag, (True,)
    return (compared[0], tuple(sorted(compared[1]))) if compared is not None else None


def _links(chain: ast.If) -> Iterator[ast.If]:
    """The ``if`` and each ``elif`` of a chain, as chain_of walks them."""
    node = chain
    yield node
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        yield node


def _closed_under(module: str, body: list[ast.stmt], when: When) -> list[Found]:
    out = []
    for chain in unconditional_ifs(body):
        closed = closed_chain(chain)
        if closed is not None and closed[0] not in {field for field, _ in when}:
            out.append(Found(closed[0], tuple(sorted(closed[1])), module, closed[2], when))
    return out


def _built(
    body: list[ast.stmt], when: When | None, imported: dict[str, tuple[str, str]], tree: Tree
) -> list[Found]:
    """Fields handed to a class the module imported, which closes what it stored them as."""
    out: list[Found] = []
    for call in _own_level_calls(body):
        held = imported.get(call.func.id) if isinstance(call.func, ast.Name) else None
        cls = _class(tree(held[0]), held[1]) if held else None
        if held and cls:
            out += _handed(call, cls, held[0], when)
    return out


def _handed(call: ast.Call, cls: ast.ClassDef, where: str, when: When | None) -> list[Found]:
    """The fields ``call`` hands ``cls`` as keywords (``mode=args.vllm_mode``) that the class closes."""
    closed = closed_choices(cls)
    out: list[Found] = []
    for keyword in call.keywords:
        field = field_of(keyword.value)
        found = closed.get(_stored_once(cls, keyword.arg) or "") if field and keyword.arg else None
        if field and found is not None:
            out.append(Found(field, found.values, where, found.line, when))
    return out


def _own_level_calls(body: list[ast.stmt]) -> Iterator[ast.Call]:
    """Calls that run whenever ``body`` does: a statement's own value (``x = C(...)``, ``C(...)``),
    through ``with``/``for``/``try`` bodies as unconditional_ifs walks, never inside an ``if``."""
    for stmt in body:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
        if isinstance(value, ast.Call):
            yield value
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Try)):
            yield from _own_level_calls(stmt.body)


def _imported_names(module: str, tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Name -> (the module it is imported from, its name there) for ``from
    ..generation.vllm_generation import X [as Y]``, relative imports resolved against ``module``'s
    package; only the package's own modules (another package's source is never looked up, so
    finding it never imports that package)."""
    package = module.rpartition(".")[0]
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        try:
            source = importlib.util.resolve_name("." * node.level + node.module, package)
        except (ImportError, ValueError):
            continue
        if source.partition(".")[0] == module.partition(".")[0]:  # the package's own classes only
            out.update({a.asname or a.name: (source, a.name) for a in node.names if a.name != "*"})
    return out


def _class(tree: ast.Module | None, name: str) -> ast.ClassDef | None:
    if tree is None:
        return None
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)


def _stored_once(cls: ast.ClassDef, parameter: str) -> str | None:
    """``A`` where ``__init__`` does ``self.A = parameter`` and nothing else in the class assigns
    ``self.A`` (else the attribute may hold another value when its chain runs)."""
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    stored = _stored_from(init, parameter) if init is not None else []
    return stored[0] if len(stored) == 1 and _assignments(cls, stored[0]) == 1 else None


def _stored_from(init: ast.FunctionDef, parameter: str) -> list[str]:
    """The ``self`` attributes ``__init__``'s own statements set to ``parameter``."""
    if parameter not in {a.arg for a in (*init.args.args, *init.args.kwonlyargs)}:
        return []
    out = []
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id == parameter:
            out += [target.attr for target in stmt.targets if _on_self(target)]
    return out


def _assignments(cls: ast.ClassDef, attribute: str) -> int:
    """How many statements anywhere in the class assign ``self.<attribute>``."""
    return sum(1 for n in ast.walk(cls) for t in _targets(n) if _on_self(t) and t.attr == attribute)


def _on_self(node: ast.expr) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []
