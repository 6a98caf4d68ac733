"""String options a trainer's own code closes: the values an ``if``/``elif`` chain handles before its
``else: raise``.

TRL types ``loss_type`` as ``str``: its config accepts ``loss_type: grpoo``, the run loads the model,
generates its first batch, and only then does the trainer's loss raise ``Unknown loss type``, minutes
of GPU time (and a queue wait) after the typo. Help text cannot say which values work (it names
others in quotes too); the code that raises can. A chain counts when every test compares one field
(``self.F``, ``self.args.F``, ``args.F``) with string constants (``==``, ``in (...)``) and its final
``else`` raises, or when ``if F not in (...)`` raises, at a function's own level (code_chains). A
chain inside another ``if`` holds only under that condition: where the condition is one branch of a
switch over another field, or a flag, it is written as an ``if``/``then`` rule; a field handed to a
class the trainer builds is closed by that class's chains (code_guards). The values of every such
chain of one field under one condition are joined, so a value some chain handles is never refused.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Collection, Iterable
from typing import Any

from sweepgen.compile.schema import code_guards, code_ignored, jsonschema_subset, string_values
from sweepgen.compile.schema.code_chains import closed_choices, closed_items
from sweepgen.compile.schema.code_guards import Found, When
from sweepgen.formats import pysource

Closes = tuple[list[str], str]  # the values, and why: where the code raises for any other


def close_strings(props: dict[str, Any], modules: Iterable[str]) -> list[dict[str, Any]]:
    """Give each string property of a schema without values of its own the values the code of
    ``modules`` (and of their trainers) closes; the raise is named in the property's ``$comment``,
    which a refusal shows. Returns the ``if``/``then`` schemas (for the schema's ``allOf``) of the
    fields closed only under another field's value (code_guards)."""
    modules = list(modules)
    open_strings = {n for n, p in props.items() if string_values.open_string(p)}
    for name, (values, why) in closed_in(modules, open_strings).items():
        string_values.restrict(props[name], values)
        props[name]["$comment"] = why
    _close_items(props, modules)
    code_ignored.refuse_true(props, modules)  # DPO's padding_free, which the trainer turns off
    open_strings = {n for n, p in props.items() if string_values.open_string(p)}
    return [
        _if_then(props, name, when, closes)
        for (name, when), closes in guarded_in(modules, open_strings).items()
        if all(field in props for field, _ in when)
    ]


def _close_items(props: dict[str, Any], modules: list[str]) -> None:
    """Hold each list-of-strings property's items to what the code closes them to (DPO's ``loss_type``)."""
    open_lists = {n for n, p in props.items() if string_values.open_items(p)}
    for name, (values, why) in items_closed_in(modules, open_lists).items():
        string_values.restrict_items(props[name], values)
        props[name]["$comment"] = why


def _if_then(props: dict[str, Any], name: str, when: When, closes: Closes) -> dict[str, Any]:
    """``name`` held to the values when each of ``when``'s fields ``G`` has one of its values: a ``G``
    left out counts as its default (the ``if`` holds without it only where that default is among
    them)."""
    held = copy.deepcopy(props[name])
    string_values.restrict(held, closes[0])
    held["$comment"] = closes[1]
    condition: dict[str, Any] = {"properties": {field: {"enum": list(values)} for field, values in when}}
    required = [
        field
        for field, values in when  # as the `if` itself compares
        if not any(jsonschema_subset.same(props[field].get("default", _NO_DEFAULT), v) for v in values)
    ]
    if required:
        condition["required"] = required
    return {"if": condition, "then": {"properties": {name: held}}}


_NO_DEFAULT = object()


def closed_in(modules: Iterable[str], fields: Collection[str]) -> dict[str, Closes]:
    """Field -> (the values, where the code raises for any other) for the fields in ``fields`` that
    the code of ``modules`` or of their trainers (``trl.trainer.grpo_config`` ->
    ``trl.trainer.grpo_trainer``) closes whatever the config's other values: read from source,
    never imported for it."""
    return {name: closes for (name, when), closes in _joined(modules, fields).items() if when is None}


def items_closed_in(modules: Iterable[str], fields: Collection[str]) -> dict[str, Closes]:
    """Field -> (the values, why) for the list fields in ``fields`` whose every item the code of
    ``modules`` or of their trainers closes (code_chains.closed_items: DPO's ``loss_type``)."""
    found = closed_in(modules, {f"{name}{_ITEMS}" for name in fields})
    return {name.removesuffix(_ITEMS): closes for name, closes in found.items()}


_ITEMS = "[]"  # a list field's items, as a finding names them


def guarded_in(modules: Iterable[str], fields: Collection[str]) -> dict[tuple[str, When], Closes]:
    """(field, condition) -> (the values, why) for the fields closed only under a condition on
    another field (code_guards); a field closed whatever the condition is left out."""
    joined = _joined(modules, fields)
    always = {name for name, when in joined if when is None}
    return {(n, w): closes for (n, w), closes in joined.items() if w is not None and n not in always}


def _joined(modules: Iterable[str], fields: Collection[str]) -> dict[tuple[str, When | None], Closes]:
    """The values of every finding of one field under one condition joined (a value some chain
    handles is never refused), the first raise named."""
    values: dict[tuple[str, When | None], set[str]] = {}
    why: dict[tuple[str, When | None], str] = {}
    for module in dict.fromkeys(m for name in modules for m in _with_trainer(name)):
        for found in (f for f in _found_in_module(module) if f.field in fields):
            key = (found.field, found.when)
            values.setdefault(key, set()).update(found.values)
            why.setdefault(key, _why(found))
    return {key: (sorted(values[key]), why[key]) for key in values}


def _why(found: Found) -> str:
    where = f"{found.module.replace('.', '/')}.py:{found.line}"
    package = found.module.partition(".")[0]
    if found.when is None:
        return f"{package} raises for any other value, {where}"
    said = " and ".join(f"{field} is {_any_of(values)}" for field, values in found.when)
    return f"{package} raises for any other value when {said}, {where}"


def _any_of(values: tuple[str | bool, ...]) -> str:
    return " or ".join("true" if v is True else repr(v) for v in values)


@functools.lru_cache(maxsize=32)
def _found_in_module(module: str) -> tuple[Found, ...]:
    """Every field the module's code closes, always or under a condition: its source parsed once per
    process (a `check` of several specs naming one class, and the class's schema and validator,
    read it once)."""
    tree = pysource.parsed(module)
    if tree is None:
        return ()
    always = [Found(name, c.values, module, c.line) for name, c in closed_choices(tree).items()]
    items = [Found(name + _ITEMS, c.values, module, c.line) for name, c in closed_items(tree).items()]
    return (*always, *items, *code_guards.guarded(module, pysource.parsed))


def _with_trainer(module: str) -> tuple[str, ...]:
    return (module, module[: -len("_config")] + "_trainer") if module.endswith("_config") else (module,)
