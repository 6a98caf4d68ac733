"""String options a trainer's own code closes: the values an ``if``/``elif`` chain handles before its
``else: raise``.

TRL types ``loss_type`` as ``str``: its config accepts ``loss_type: grpoo``, the run loads the model,
generates its first batch, and only then does the trainer's loss raise ``Unknown loss type``, minutes
of GPU time (and a queue wait) after the typo. Help text cannot say which values work (it names
others in quotes too); the code that raises can. A chain counts when every test compares one field
(``self.F``, ``self.args.F``, ``args.F``) with string constants (``==``, ``in (...)``) and its final
``else`` raises, or when ``if F not in (...)`` raises; only chains at a function's own level (a chain
inside another ``if`` holds only under that condition, e.g. one loss type's sub-options). The values
of every such chain of one field are joined, so a value some chain handles is never refused.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sweepgen.compile.schema import string_values

_HOLDERS = ({"self"}, {"args"}, {"self", "args"})  # `self.F`, `args.F`, `self.args.F`


@dataclass(frozen=True)
class Closed:
    """The values a field's chains handle, and the line of the first ``raise`` for any other."""

    values: tuple[str, ...]
    line: int


def close_strings(props: dict[str, Any], modules: Iterable[str]) -> None:
    """Give each string property of a schema without values of its own the values the code of
    ``modules`` (and of their trainers) closes; the raise is named in the property's ``$comment``,
    which a refusal shows."""
    open_strings = {n for n, p in props.items() if string_values.open_string(p)}
    for name, (values, why) in closed_in(modules, open_strings).items():
        string_values.restrict(props[name], values)
        props[name]["$comment"] = why


def closed_in(modules: Iterable[str], fields: Collection[str]) -> dict[str, tuple[list[str], str]]:
    """Field -> (the values, where the code raises for any other) for the fields in ``fields`` that
    the code of ``modules`` or of their trainers (``trl.trainer.grpo_config`` ->
    ``trl.trainer.grpo_trainer``) closes: read from source, never imported for it."""
    out: dict[str, tuple[list[str], str]] = {}
    for module in dict.fromkeys(m for name in modules for m in _with_trainer(name)):
        closed = _closed_in_module(module)
        for name, found in ((f, closed[f]) for f in fields if f in closed and f not in out):
            where = f"{module.replace('.', '/')}.py:{found.line}"
            out[name] = (
                list(found.values),
                f"{module.partition('.')[0]} raises for any other value, {where}",
            )
    return out


@functools.lru_cache(maxsize=32)
def _closed_in_module(module: str) -> dict[str, Closed]:
    """Every field the module's code closes: its source parsed once per process (a `check` of
    several specs naming one class, and the class's schema and validator, read it once)."""
    source_path = _source_file(module)
    if source_path is None:
        return {}
    with open(source_path, encoding="utf-8") as fh:
        return closed_choices(fh.read())


def closed_choices(source: str, fields: Collection[str] | None = None) -> dict[str, Closed]:
    """Per field (of ``fields``; None: any): the string values the code in ``source`` handles
    before it raises."""
    found: dict[str, tuple[set[str], int]] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for chain in _unconditional_ifs(node.body):
            closed = _closed(chain)
            if closed is None or (fields is not None and closed[0] not in fields):
                continue
            values, line = found.setdefault(closed[0], (set(), closed[2]))
            values |= closed[1]
    return {name: Closed(tuple(sorted(values)), line) for name, (values, line) in found.items()}


def _unconditional_ifs(body: list[ast.stmt]) -> Iterator[ast.If]:
    """The ``if`` statements run whenever ``body`` runs: not inside another ``if`` (nor a nested
    function, walked on its own)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield stmt
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Try)):
            yield from _unconditional_ifs(stmt.body)


def _closed(chain: ast.If) -> tuple[str, set[str], int] | None:
    """(field, the values handled, the raise's line) of a closed chain; None for any other ``if``."""
    return _refuses_outside(chain) or _handles_then_raises(chain)


def _refuses_outside(chain: ast.If) -> tuple[str, set[str], int] | None:
    """``if F not in (...): raise``."""
    refused = _not_in(chain.test)
    if refused is None or not _raises(chain.body) or chain.orelse:
        return None
    return refused[0], refused[1], _raise_line(chain.body)


def _handles_then_raises(chain: ast.If) -> tuple[str, set[str], int] | None:
    """``if F == "a": ... elif F in ("b", "c"): ... else: raise``."""
    tests, last = _chain(chain)
    read = [test for test in tests if test is not None]
    fields = {field for field, _ in read}
    if len(read) != len(tests) or len(fields) != 1 or not _raises(last.orelse):
        return None
    return fields.pop(), {value for _, values in read for value in values}, _raise_line(last.orelse)


def _chain(first: ast.If) -> tuple[list[tuple[str, set[str]] | None], ast.If]:
    """The tests of an ``if``/``elif`` chain (each read by _equals) and its last ``elif``."""
    tests, node = [_equals(first.test)], first
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        tests.append(_equals(node.test))
    return tests, node


def _equals(test: ast.expr) -> tuple[str, set[str]] | None:
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
    field, strings = _field(name), _strings(values)
    return (field, strings) if field and strings else None


def _field(node: ast.expr) -> str | None:
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


def _strings(node: ast.expr) -> set[str]:
    """The strings of a literal tuple, list or set of string constants; empty for anything else."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or not node.elts:
        return set()
    values = [_string(e) for e in node.elts]
    return {v for v in values if v is not None} if None not in values else set()


def _raises(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _raise_line(body: list[ast.stmt]) -> int:
    return body[-1].lineno


def _with_trainer(module: str) -> tuple[str, ...]:
    return (module, module[: -len("_config")] + "_trainer") if module.endswith("_config") else (module,)


def _source_file(module: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec else None
    return origin if origin and origin.endswith(".py") else None
