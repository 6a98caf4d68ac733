"""Fields a dataclass takes as one value or as a list: its ``__post_init__`` converts between them.

TRL's DPOConfig takes ``loss_type: sigmoid`` and makes it ``["sigmoid"]``; its ModelConfig makes a
one-item ``lora_target_modules`` list the item itself, so ``lora_target_modules: all-linear`` is the
form PEFT reads. Both annotations say ``list[str]``: a schema read from the types alone refuses what
the class accepts and ``trl <command> --config`` runs (its parser hands a YAML string to the class
unchanged). The class's own conversion is the evidence, read from its source (parsed, never run):
``self.f = [self.f]`` or ``self.f = self.f[0]`` in the ``__post_init__`` of the class or a base. A
list field without one still refuses a single value: GRPO's script would take ``reward_funcs:
accuracy_reward`` as a string and look its letters up one by one.

The same reading finds a field the class maps from other values: GRPOConfig's ``scale_rewards``
is a ``str``, and its ``__post_init__`` makes ``True`` "group" and ``False`` "none"
(``self.f = {True: "group", False: "none"}.get(self.f, self.f)``), so ``scale_rewards: false``, the
Dr. GRPO recipes' line, is taken too: exactly the mapping's constant keys, nothing else.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import operator
import textwrap
import types
import typing
from typing import Any, Literal

from sweepgen.formats import pysource


def accepted_hints(cls: type, hints: dict[str, Any]) -> dict[str, Any]:
    """``hints`` (field name -> type) with every field the class converts also taking one item, and
    every field it maps from constants also taking those constants."""
    both = one_or_list_fields(cls)
    out = {name: _with_one_item(hint) if name in both else hint for name, hint in hints.items()}
    for name, keys in mapped_fields(cls).items():
        if name in out:
            out[name] = out[name] | _type_of(keys)
    for name, const in argparse_consts(cls).items():
        if name in out:  # a switch's `false` says "off" as its absence does
            out[name] = out[name] | _type_of((True, False) if isinstance(const, bool) else (const,))
    return _with_resume_true(cls, out)


def _with_resume_true(cls: type, hints: dict[str, Any]) -> dict[str, Any]:
    if _RESUME in hints and _trainer_resumes_from_true(cls):
        hints[_RESUME] = hints[_RESUME] | bool
    return hints


_RESUME = "resume_from_checkpoint"


def _trainer_resumes_from_true(cls: type) -> bool:
    """Whether ``resume_from_checkpoint: true`` is a value a TrainingArguments subclass's run takes:
    TRL's scripts hand the field to ``Trainer.train``, whose parameter of that name transformers
    annotates ``str | bool | None`` (``true``: the last checkpoint-N of output_dir), and TrlParser
    keeps a config's ``true`` a bool; the field itself says ``str | None``. Read from the installed
    transformers' ``trainer.py`` (parsed, never imported)."""
    if not any(c.__name__ == "TrainingArguments" for c in cls.__mro__):
        return False
    annotation = _train_annotation()
    return annotation is not None and "bool" in ast.unparse(annotation)


def _train_annotation() -> ast.expr | None:
    """The annotation of ``Trainer.train``'s ``resume_from_checkpoint`` in transformers' source."""
    tree = pysource.parsed("transformers.trainer")
    trainer = _first(ast.ClassDef, "Trainer", tree.body if tree else [])
    train = _first(ast.FunctionDef, "train", trainer.body if isinstance(trainer, ast.ClassDef) else [])
    args = train.args.args if isinstance(train, ast.FunctionDef) else []
    return next((a.annotation for a in args if a.arg == _RESUME), None)


def _first(kind: type, name: str, body: list[ast.stmt]) -> ast.stmt | None:
    return next((n for n in body if isinstance(n, kind) and getattr(n, "name", None) == name), None)


def argparse_consts(cls: type) -> dict[str, Any]:
    """Field -> the ``const`` its metadata hands argparse: transformers' ``fsdp: str | None`` says
    ``const: True`` (a bare ``--fsdp`` turns FSDP on; its help says ``fsdp=True``), so a config's
    ``fsdp: true`` is a value the class takes, though its annotation names no boolean."""
    consts = {f.name: dict(f.metadata or {}).get("const") for f in dataclasses.fields(cls)}
    return {name: const for name, const in consts.items() if isinstance(const, (bool, int, float, str))}


def _type_of(keys: tuple[Any, ...]) -> Any:
    """The type taking exactly ``keys``: ``bool`` for both booleans (pydantic's ``Literal[False]``
    would also take 0, which JSON Schema's enum refuses), else a ``Literal``."""
    if set(keys) == {True, False} and all(isinstance(k, bool) for k in keys):
        return bool
    return Literal[keys]


def one_or_list_fields(cls: type) -> frozenset[str]:
    """The fields whose one-item and list forms the class's ``__post_init__`` converts between."""
    return frozenset(name for name, how in _conversions(cls) if how is None)


def mapped_fields(cls: type) -> dict[str, tuple[Any, ...]]:
    """Field -> the constants its ``__post_init__`` maps to another value (``{True: "group", False:
    "none"}.get(self.f, self.f)``)."""
    out: dict[str, tuple[Any, ...]] = {}
    for name, keys in _conversions(cls):
        if keys is not None:
            out[name] = tuple(dict.fromkeys((*out.get(name, ()), *keys)))
    return out


def _conversions(cls: type) -> list[tuple[str, tuple[Any, ...] | None]]:
    """(field, None) for a one-or-list conversion, (field, keys) for a mapping, over the MRO."""
    found: list[tuple[str, tuple[Any, ...] | None]] = []
    for klass in cls.__mro__:
        post = vars(klass).get("__post_init__")
        if post is not None:
            found += _converted(post)
    return found


def _converted(func: Any) -> list[tuple[str, tuple[Any, ...] | None]]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return []  # no source to read (a compiled class): its annotations alone decide
    out: list[tuple[str, tuple[Any, ...] | None]] = []
    for node in ast.walk(tree):
        name = _assigned(node)
        if name is None:
            continue
        assert isinstance(node, ast.Assign)
        if _wraps(node.value, name) or _first_item(node.value, name):
            out.append((name, None))
        elif (keys := _mapping_keys(node.value, name)) is not None:
            out.append((name, keys))
    return out


def _assigned(node: ast.AST) -> str | None:
    """The field ``self.f = ...`` assigns."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return _self_attribute(node.targets[0])
    return None


def _mapping_keys(value: ast.expr, name: str) -> tuple[Any, ...] | None:
    """The keys of ``{k: v, ...}.get(self.name, self.name)`` when every key is a constant."""
    mapping = _get_on_self(value, name)
    keys = mapping.keys if mapping is not None else []
    if not keys or not all(isinstance(k, ast.Constant) for k in keys):
        return None
    return tuple(k.value for k in keys if isinstance(k, ast.Constant))


def _get_on_self(value: ast.expr, name: str) -> ast.Dict | None:
    """The dict literal of ``{...}.get(self.name, self.name)``."""
    if not (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get"
    ):
        return None
    same = len(value.args) == 2 and all(_self_attribute(a) == name for a in value.args)  # get(key, default)
    return value.func.value if same and isinstance(value.func.value, ast.Dict) else None


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
