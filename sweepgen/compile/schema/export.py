"""``sweepgen schema --export MODULE:CLASS``: a config class as a JSON Schema file.

A spec whose ``schema:`` names a class (``trl:GRPOConfig``) needs that package to be checked, so a
CI lint job or a pre-commit hook without the ML stack cannot check it. Exported once to a file and
committed, the schema is data: ``schema: schemas/grpo.json`` validates with no import, and the lock
records the file's hash, the same in every environment.

What the file holds: one property per init field, its type (pydantic's JSON Schema of the
annotation, ``$ref`` inlined because the validator reads no ``$defs``), its help text as the
description, its default, and an ``enum`` from the type (a ``Literal``, an ``Enum``) or the
field's ``choices`` metadata, never from help text (prose names other values in quotes too). The
root is stamped with the class, the package and its version under ``x-sweepgen``, so a reviewer
sees which release it came from.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import json
import os
import sys
import time
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import to_jsonable_python

from sweepgen.compile.schema import code_choices, report_to, string_values, trl_raises
from sweepgen.compile.schema.enum_cast import enum_only_hints
from sweepgen.compile.schema.one_or_list import accepted_hints
from sweepgen.errors import UserError

STAMP = "x-sweepgen"


def metadata_choices(f: dataclasses.Field[Any]) -> list[str]:
    """The values a field's ``choices`` metadata allows (what HfArgumentParser hands argparse as
    ``choices``), when they are strings; empty otherwise. Help text is prose, never read for values:
    it names other options and examples in quotes too."""
    choices = f.metadata.get("choices") if f.metadata else None
    if isinstance(choices, (list, tuple)) and choices and all(isinstance(c, str) for c in choices):
        return list(choices)
    return []


def export(ref: str, cls: Any) -> dict[str, Any]:
    """The JSON Schema of a dataclass or pydantic model ``cls`` (named ``ref``, ``module:Class``)."""
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        schema = _dataclass_schema(ref, cls)
    elif isinstance(cls, type) and issubclass(cls, BaseModel):
        schema = _inline(cls.model_json_schema())
    else:
        raise UserError(
            f"{ref} is not a dataclass or a pydantic model class",
            hint="name a config class as module:Class, e.g. trl:GRPOConfig",
        )
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema[STAMP] = {"source": ref, **_package_of(ref)}
    return schema


def dumps(schema: dict[str, Any]) -> str:
    """Deterministic text: the same class gives the same bytes on every machine."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def field_enum(f: dataclasses.Field[Any], type_schema: dict[str, Any]) -> list[str]:
    """The ``choices`` of a field whose type takes strings (and has no enum of its own)."""
    if "enum" in type_schema or "const" in type_schema or not string_values.takes_string(type_schema):
        return []
    return metadata_choices(f)


def _dataclass_schema(ref: str, cls: type) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as err:  # noqa: BLE001 - whatever the class's annotations raise
        raise UserError(f"cannot read the field types of {ref}: {type(err).__name__}: {err}") from None
    hints = enum_only_hints(cls, accepted_hints(cls, hints))
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue  # set by the class itself, never by a config
        props[f.name] = _field_schema(ref, f, hints[f.name])
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)  # a field with neither has no default either
    if report_to.FIELD in props:
        report_to.restrict(props[report_to.FIELD], report_to.tracker_names(cls))
    # and what its __post_init__ (or PEFT) raises at the run's start
    guarded = [*code_choices.close_strings(props, [cls.__module__]), *trl_raises.class_rules(cls, props)]
    out: dict[str, Any] = {
        "title": cls.__name__,
        "type": "object",
        "properties": props,
        "additionalProperties": False,
        **({"allOf": guarded} if guarded else {}),
    }
    if required:
        out["required"] = required
    return out


def _field_schema(ref: str, f: dataclasses.Field[Any], hint: Any) -> dict[str, Any]:
    """One field's schema: its type's, with its help text, its ``choices`` and its default."""
    try:
        prop = _inline(TypeAdapter(hint).json_schema())
    except Exception as err:  # noqa: BLE001 - a type pydantic cannot describe
        raise UserError(
            f"{ref}: field {f.name!r} has a type JSON Schema cannot express ({type(err).__name__}: {err})",
            hint="export a pydantic model or write that field's schema by hand",
        ) from None
    help_text = str(f.metadata.get("help", "")) if f.metadata else ""
    if help_text:
        prop["description"] = help_text
    string_values.restrict(prop, field_enum(f, prop))
    default = _default(f)
    if default is not dataclasses.MISSING:
        prop["default"] = default
    return prop


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return dataclasses.MISSING
    try:
        plain = to_jsonable_python(value)
        json.dumps(plain, allow_nan=False)
    except (TypeError, ValueError):
        return dataclasses.MISSING  # a default JSON cannot hold: left out, the type still checks
    return plain


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` to its ``$defs`` replaced by the definition itself."""
    defs = schema.pop("$defs", {})

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rpartition("/")[2]
            if name in seen or name not in defs:
                raise UserError(
                    f"the schema refers to itself or to an unknown definition ({ref})",
                    hint="recursive config types cannot be exported; write the schema by hand",
                )
            rest = {k: resolve(v, seen) for k, v in node.items() if k != "$ref"}
            return {**resolve(defs[name], (*seen, name)), **rest}
        return {k: resolve(v, seen) for k, v in node.items()}

    out = resolve(schema, ())
    assert isinstance(out, dict)
    return out


def _package_of(ref: str) -> dict[str, str]:
    """The installed distribution the class came from and its version; empty for project code."""
    top = ref.partition(":")[0].partition(".")[0]
    dists = _distributions().get(top) or []
    if len(dists) != 1:
        return {}
    try:
        return {"package": dists[0], "version": importlib.metadata.version(dists[0])}
    except importlib.metadata.PackageNotFoundError:
        return {}


# importlib.metadata.packages_distributions() reads the file list of every installed distribution:
# ~0.2 CPU-s where torch and TRL are installed, once per exported class (`init --schema trl:grpo`
# exports four, a process that checks several commands more). Kept while no folder on sys.path has
# changed: installing or removing a distribution adds or removes its *.dist-info folder (its link
# count) or a .pth or .egg-link file (its modification time) in one of them. A file time is as
# coarse as the file system's clock (a few milliseconds on ext4, 2 s on FAT): a distribution
# replaced by another (the link count unchanged) in the same tick as the change before the map was
# read left the key as it was, and the stale map named the wrong distribution. So, as git does with
# a racily clean index, a map read while a folder's time is within _RACY_NS of the reading is used
# once and never kept (importlib.metadata's own listings, kept by the same file time, dropped
# first): a later change gets a later time.
_DISTRIBUTIONS: dict[tuple[tuple[str, int, int, int], ...], Mapping[str, list[str]]] = {}
_RACY_NS = 2_000_000_000


def _distributions() -> Mapping[str, list[str]]:
    """packages_distributions(), read again once a folder on sys.path changed (or might have, in
    the file time it had when the map was read)."""
    key = tuple(_folder_state(os.path.abspath(entry or os.curdir)) for entry in sys.path)
    found = _DISTRIBUTIONS.get(key)
    if found is None:
        _DISTRIBUTIONS.clear()
        settled = all(state[3] < time.time_ns() - _RACY_NS for state in key)  # not there (-1): old
        found = _read_distributions(settled)
        if settled:
            _DISTRIBUTIONS[key] = found
    return found


def _read_distributions(settled: bool) -> Mapping[str, list[str]]:
    """packages_distributions(); where a folder is not ``settled``, importlib.metadata's listings
    (kept by each folder's file time as well) dropped first."""
    if not settled:
        _drop_metadata_listings()
    return importlib.metadata.packages_distributions()


def _drop_metadata_listings() -> None:
    """Forget importlib.metadata's listing of each folder (kept by the folder's file time). Python
    3.12's importlib.invalidate_caches does it; before, MetadataPathFinder.invalidate_caches was a
    plain function, so nothing called it: called here with its class."""
    importlib.invalidate_caches()
    finder: Any = getattr(importlib.metadata, "MetadataPathFinder")  # noqa: B009 - private to typeshed
    try:
        finder.invalidate_caches()
    except TypeError:  # Python 3.10 and 3.11: not a classmethod
        finder.invalidate_caches(finder)


def _folder_state(path: str) -> tuple[str, int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (path, -1, -1, -1)
    return (path, st.st_ino, st.st_nlink, st.st_mtime_ns)
