"""Fields a dataclass takes as one value or as a list: its ``__post_init__`` converts between them.

TRL's DPOConfig takes ``loss_type: sigmoid`` and makes it ``["sigmoid"]``; its ModelConfig makes a
one-item ``lora_target_modules`` list the item itself, so ``lora_target_modules: all-linear`` is the
form PEFT reads. Both annotations say ``list[str]``: a schema read from the types alone refuses what
the class accepts and ``trl <command> --config`` runs (its parser hands a YAML string to the class
unchanged). The class's own conversion is the evidence, read from its source (parsed, never run):
``self.f = [self.f]`` or ``self.f = self.f[0]`` in the ``__post_init__`` of the class or a base. A
list field without one still refuses a single value: GRPO's script would take ``reward_funcs:
accuracy_reward`` as a string and look its letters up one by one.
"""

from __future__ import annotations

import ast
import functools
import inspect
import operator
import textwrap
import types
import typing
from typing import Any


def accepted_hints(cls: type, hints: dict[str, Any]) -> dict[str, Any]:
    """``hints`` (field name -> type) with every field the class converts also taking one item."""
    both = one_or_list_fields(cls)
    return {name: _with_one_item(hint) if name in both else hint for name, hint in hints.items()}


def one_or_list_fields(cls: type) -> frozenset[str]:
    """The fields whose one-item and list forms the class's ``__post_init__`` converts between."""
    names: set[str] = set()
    for klass in cls.__mro__:
        post = vars(klass).get("__post_init__")
        if post is not None:
            names |= _converted(post)
    return frozenset(names)


def _converted(func: Any) -> set[str]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return set()  # no source to read (a compiled class): its annotations alone decide
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = _self_attribute(node.targets[0])
            if name and (_wraps(node.value, name) or _first_item(node.value, name)):
                out.add(name)
    return out


def _self_attribute(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _wraps(value: ast.expr, name: str) -> bool:
    """``[self.name]``"""
    return isinstance(value, ast.List) and len(value.elts) == 1 and _self_attribute(value.elts[0]) == name


def _first_item(value: ast.expr, name: str) -> bool:
    """``self.name[0]``"""
    return (
        isinstance(value, ast.Subscript)
        and _self_attribute(value.value) == name
        and isinstance(value.slice, ast.Constant)
        and value.slice.value == 0
    )


def _with_one_item(hint: Any) -> Any:
    """``hint`` with each ``list[T]`` in it also taking a single ``T``."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    members = typing.get_args(hint) if union else (hint,)
    items = [typing.get_args(m)[0] for m in members if typing.get_origin(m) is list and typing.get_args(m)]
    new = tuple(i for i in items if i not in members)
    return functools.reduce(operator.or_, members + new) if new else hint
