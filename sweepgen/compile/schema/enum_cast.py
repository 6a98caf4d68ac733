"""Fields typed ``Enum | str`` that the class turns into its enum: only the enum's values are taken.

transformers types ``eval_strategy: IntervalStrategy | str`` (``save_strategy``, ``hub_strategy``,
``lr_scheduler_type``, ``optim`` alike): the ``str`` is there so a config may write the value as
text, and ``TrainingArguments.__post_init__`` makes it the enum at once
(``self.eval_strategy = IntervalStrategy(self.eval_strategy)``), raising for any other string. A
schema read from the annotation alone took ``eval_strategy: step`` or ``optim: adamw``, so `check`
was green and every ``trl <command> --config`` run failed at its start. The class's own conversion
is the evidence, read from its source (parsed, never run): an unconditional ``self.f = E(self.f)``
at the ``__post_init__``'s own level, in the class or a base, with ``E`` an ``Enum`` of the
annotation.
"""

from __future__ import annotations

import ast
import enum
import functools
import inspect
import operator
import textwrap
import types
import typing
from typing import Any


def enum_only_hints(cls: type, hints: dict[str, Any]) -> dict[str, Any]:
    """``hints`` with ``str`` dropped from each ``E | str`` field the class converts to ``E``."""
    out = dict(hints)
    for name, enum_cls in cast_fields(cls).items():
        if name in out:
            out[name] = _without_str(out[name], enum_cls)
    return out


def cast_choices(cls: type, hints: dict[str, Any]) -> dict[str, tuple[list[str], str]]:
    """Field -> (its enum's string values, why) for each ``E | str`` field the class casts to
    ``E``: the dataclass route holds a string to them (pydantic's own enum error names no
    did-you-mean)."""
    out: dict[str, tuple[list[str], str]] = {}
    for name, enum_cls in cast_fields(cls).items():
        values = [m.value for m in enum_cls]
        strings = all(isinstance(v, str) for v in values)
        if strings and name in hints and _without_str(hints[name], enum_cls) is not hints[name]:
            out[name] = (values, f"{cls.__name__}.__post_init__ makes it a {enum_cls.__name__}")
    return out


def cast_fields(cls: type) -> dict[str, type[enum.Enum]]:
    """Field -> the Enum its ``__post_init__`` (of the class or a base) casts it to unconditionally."""
    found: dict[str, type[enum.Enum]] = {}
    for klass in reversed(cls.__mro__):  # a subclass's own conversion is read last, so it wins
        post = vars(klass).get("__post_init__")
        if post is not None:
            found.update(_casts(post))
    return found


def _casts(func: Any) -> dict[str, type[enum.Enum]]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return {}  # no source to read (a compiled class): its annotations alone decide
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else []
    names = getattr(func, "__globals__", {})
    out: dict[str, type[enum.Enum]] = {}
    for stmt in body:  # the function's own level: a cast under an `if` may not happen
        field, callee = _cast(stmt)
        target = names.get(callee) if callee else None
        if field and isinstance(target, type) and issubclass(target, enum.Enum):
            out[field] = target
    return out


def _cast(stmt: ast.stmt) -> tuple[str | None, str | None]:
    """(f, E) for ``self.f = E(self.f)``; (None, None) for anything else."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None, None
    field = _self_attribute(stmt.targets[0])
    call = stmt.value
    if field is None or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None, None
    if len(call.args) != 1 or call.keywords or _self_attribute(call.args[0]) != field:
        return None, None
    return field, call.func.id


def _self_attribute(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _without_str(hint: Any, enum_cls: type[enum.Enum]) -> Any:
    """``E | str`` (``| None`` kept) as ``E``; any other annotation unchanged."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    members = typing.get_args(hint) if union else (hint,)
    if enum_cls not in members or str not in members:
        return hint
    return functools.reduce(operator.or_, [m for m in members if m is not str])
