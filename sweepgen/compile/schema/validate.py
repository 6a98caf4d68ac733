"""The spec's optional ``schema:``: a pydantic model or a dataclass (``module:Class``, e.g.
``trl:GRPOConfig``), or a JSON Schema file.

Either becomes one function ``config -> [(dotted path, message), ...]`` (empty when valid), so the
validator does not care which kind it got. JSON Schema files are checked by our own small
validator (sweepgen.compile.schema.jsonschema_subset) instead of the ``jsonschema`` package, to keep core
dependencies light; it rejects keywords it does not implement instead of ignoring them.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import importlib
import importlib.machinery
import json
import os
import re
import sys
import typing
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import ErrorDetails
from typing_extensions import NotRequired, Required, TypedDict

from sweepgen import paths
from sweepgen.compile.schema import (
    code_choices,
    code_ignored,
    jsonschema_subset,
    report_to,
    string_values,
    suggest,
    trl_cli,
    trl_raises,
)
from sweepgen.compile.schema import export as schema_export
from sweepgen.compile.schema.code_guards import When
from sweepgen.compile.schema.enum_cast import cast_choices
from sweepgen.compile.schema.export import field_enum
from sweepgen.compile.schema.one_or_list import accepted_hints
from sweepgen.compile.spec import project
from sweepgen.compile.spec.model import Spec
from sweepgen.compile.spec.variants.expand import Expansion, Variant
from sweepgen.compile.spec.variants.gate import layer_of, show_value
from sweepgen.compile.template.sandbox import check_total, total_bounded
from sweepgen.errors import Location, SpecError, ValidationError

Validator = Callable[[dict[str, Any]], list[tuple[str, str]]]
SHOWN_PROBLEMS = 10  # of one variant, in the error

# `schema: module:Class` imports and runs code from the working directory, like a test runner does.
# For reviewing a repository that is not trusted, `--no-import` turns that off: such schema checks
# are then skipped and recorded here, so the CLI can say so loudly (never silently).
_NO_IMPORT: contextvars.ContextVar[list[tuple[Location, str]] | None] = contextvars.ContextVar(
    "sweepgen_no_import", default=None
)


def imports_disabled() -> bool:
    """True inside ``no_import()``: `module:Class` schemas are skipped, not imported."""
    return _NO_IMPORT.get() is not None


@contextlib.contextmanager
def no_import() -> Iterator[list[tuple[Location, str]]]:
    """Within this block, `module:Class` schemas are not imported; yields the skipped ones."""
    skipped: list[tuple[Location, str]] = []
    token = _NO_IMPORT.set(skipped)
    try:
        yield skipped
    finally:
        _NO_IMPORT.reset(token)


def load_validator(spec: Spec) -> Validator | None:
    ref = spec.model.schema_
    if ref is None:
        return None
    loc = spec.loc(("schema",))
    if ref.endswith(".json"):
        return _json_schema(spec, ref, loc)
    command = trl_cli.command_of(ref)
    if command is not None:  # no import when the cache holds it: not subject to --no-import
        return command_validator(command, loc)
    return _module_class(ref, loc)


def command_validator(command: str, loc: Location) -> Validator:
    """A ``trl:<command>`` schema's validator: its JSON Schema, and the rules across two numbers
    (trl_raises.across_fields) with its fields' defaults."""
    cli_schema = trl_cli.command_schema(command, loc)
    defaults = {k: p["default"] for k, p in cli_schema.get("properties", {}).items() if "default" in p}
    return lambda config: [
        *jsonschema_subset.validate(config, cli_schema),
        *trl_raises.across_fields(config, defaults),
    ]


def _module_class(ref: str, loc: Location) -> Validator | None:
    """The validator of a ``module:Class`` schema; None within ``no_imports`` (the ref recorded)."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:  # no `:` leaves attr empty
        raise SpecError(
            f"schema {ref!r} is neither `module:Class` nor a .json file",
            location=loc,
            hint="e.g. `schema: sweepgen_trainer.config:RunConfig` or `schema: ../schemas/run.json`",
        )
    skipped = _NO_IMPORT.get()
    if skipped is None:
        return _class_validator(import_class(module_name, attr, loc), ref, loc)
    if (loc, ref) not in skipped:
        skipped.append((loc, ref))
    return None


def _class_validator(model: Any, ref: str, loc: Location) -> Validator:
    """The validator of an imported ``module:Class``: a dataclass's or a pydantic model's."""
    if isinstance(model, type) and dataclasses.is_dataclass(model):
        return _dataclass_validator(model, ref, loc)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise SpecError(
            f"schema {ref!r} is not a pydantic model class or a dataclass",
            location=loc,
            hint="name a pydantic BaseModel subclass or a dataclass (e.g. trl:GRPOConfig) as module:Class",
        )
    pydantic_model = model

    def validate(config: dict[str, Any]) -> list[tuple[str, str]]:
        try:
            pydantic_model.model_validate(config)
        except PydanticValidationError as err:
            return [(".".join(str(p) for p in e["loc"]), e["msg"]) for e in err.errors(include_url=False)]
        return []

    return validate


def _dataclass_validator(cls: type, ref: str, loc: Location) -> Validator:
    """A dataclass (TRL's GRPOConfig, transformers' TrainingArguments...) checked field by field with
    pydantic's TypeAdapter: strict types, unknown keys rejected, required fields required. The
    class is never instantiated, so its ``__post_init__`` (device setup in TrainingArguments) never
    runs: a config is checked for what it says, not for the machine that renders it."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as err:  # noqa: BLE001 - whatever the class's annotations raise
        raise SpecError(
            f"cannot read the field types of dataclass {ref!r}: {type(err).__name__}: {err}",
            location=loc,
            hint="use a dataclass whose annotations resolve, or a JSON Schema file",
        ) from None
    hints = accepted_hints(cls, hints)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue  # set by the class itself, never by a config
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        fields[f.name] = Required[hints[f.name]] if required else NotRequired[hints[f.name]]
    make_typed_dict: Any = TypedDict  # built at run time from the dataclass's fields
    shape: Any = make_typed_dict(cls.__name__, fields)
    shape.__pydantic_config__ = ConfigDict(extra="forbid", strict=True)
    try:
        adapter = TypeAdapter(shape)
    except Exception as err:  # noqa: BLE001 - a field type pydantic cannot validate
        raise SpecError(
            f"pydantic cannot validate the fields of dataclass {ref!r}: {type(err).__name__}: {err}",
            location=loc,
            hint="use a JSON Schema file for this class instead",
        ) from None
    known = sorted(fields)
    choices = {**_documented_choices(cls, hints), **cast_choices(cls, hints), **_trackers(cls)}
    guarded = _guarded_choices(cls, hints)
    # what the class's __post_init__ (or PEFT) raises at the run's start, as the export says it, and
    # the list fields whose every item the code closes (DPO's `loss_type`), the flags it turns off
    raises = _with_items(trl_raises.validator_schema(cls, known), cls.__module__, known)
    defaults = _field_defaults(cls) if trl_raises.from_hugging_face(cls) else {}

    def validate(config: dict[str, Any]) -> list[tuple[str, str]]:
        try:
            adapter.validate_python(config)
        except PydanticValidationError as err:
            return _per_key([(_in_config(config, e), _message(e, cls, known)) for e in err.errors()])
        # a str field with `choices` metadata (ModelConfig.dtype): held to them, like the export;
        # one closed only under another field's value (code_guards), when the config has that value
        held = [*choices.items(), *((g.field, (g.values, g.why)) for g in guarded if g.applies(config))]
        return (
            [
                (name, jsonschema_subset.not_one_of(config[name], {"enum": allowed, "$comment": why}))
                for name, (allowed, why) in held
                if isinstance(config.get(name), str) and config[name] not in allowed
            ]
            + (jsonschema_subset.validate(config, raises) if raises else [])
            + trl_raises.across_fields(config, defaults)
        )

    return validate


def _field_defaults(cls: type) -> dict[str, Any]:
    """Each field of ``cls`` and its default (a factory's is left out: never a number)."""
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


def _with_items(rules: dict[str, Any] | None, module: str, known: list[str]) -> dict[str, Any] | None:
    """``rules`` (validator_schema's), the list fields whose items the code closes (DPO's
    ``loss_type``; one string too, which the class makes a one-item list), and the flags the
    trainer turns off (DPO's ``padding_free``: true refused)."""
    props: dict[str, dict[str, Any]] = {
        name: {} for name in code_ignored.ignored_in([module]) if name in known
    }
    code_ignored.refuse_true(props, [module])
    for name, (allowed, why) in code_choices.items_closed_in([module], known).items():
        props[name] = {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}
        string_values.restrict_items(props[name], allowed)
        props[name]["$comment"] = why
    return {"type": "object", "properties": props, "allOf": [rules] if rules else []} if props else rules


def _in_config(config: Any, error: ErrorDetails) -> str:
    """The dotted path of the config value an error is about. pydantic adds the union member it
    tried (``scale_rewards.str``, ``report_to.list[str].1``) after the key, a name the config does
    not have: such names are left out, so the error is shown at its line (a missing required key
    keeps its own name)."""
    held: list[str] = []
    node = config
    for part in error["loc"]:
        if _holds(node, part):
            node = node[part]
        elif not (error["type"] == "missing" and isinstance(node, dict)):
            continue  # a union member's name, not the config's
        held.append(str(part))
    return ".".join(held)


def _holds(node: Any, part: int | str) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def _per_key(problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One problem per path: a union's members each refused the value, said as one message. The
    members' order is pydantic's cached union's (``list[str] | str`` equals ``str | list[str]``),
    so within a key the paths and messages are sorted: the same config, the same words."""
    keys: dict[str, int] = {}
    merged: dict[str, set[str]] = {}
    for path, message in problems:
        keys.setdefault(path.split(".", 1)[0], len(keys))
        merged.setdefault(path, set()).add(message)
    ordered = sorted(merged, key=lambda path: (keys[path.split(".", 1)[0]], path))
    return [(path, "; or ".join(sorted(merged[path]))) for path in ordered]


def _message(error: ErrorDetails, cls: type, known: list[str]) -> str:
    """pydantic's message for one error, an unknown top-level key named with its closest field."""
    if error["type"] != "extra_forbidden" or len(error["loc"]) != 1:
        return error["msg"]
    close = suggest.closest_key(str(error["loc"][0]), known)
    return f"{_UNKNOWN_FIELD} of {cls.__name__}" + (f" (did you mean `{close}`?)" if close else "")


def _trackers(cls: type) -> dict[str, tuple[list[str], str]]:
    """``report_to`` written as one name, held to the trackers transformers builds (a list's items
    are the exported schema's to hold: this route checks strings only)."""
    names = report_to.tracker_names(cls)
    return {report_to.FIELD: (names, "transformers' INTEGRATION_TO_CALLBACK")} if names else {}


def _documented_choices(cls: type, hints: dict[str, Any]) -> dict[str, tuple[list[str], str]]:
    """Field name -> (the string values it allows, why): its ``choices`` metadata (see
    export.field_enum), else the values its package's code handles before it raises (code_choices)."""
    fields = [f for f in dataclasses.fields(cls) if f.init]
    closed = code_choices.closed_in([cls.__module__], [f.name for f in fields])
    out: dict[str, tuple[list[str], str]] = {}
    for f in fields:
        if _listed(f) or f.name in closed:  # else no type schema needed
            found = _choices_of(f, hints[f.name], closed.get(f.name), cls.__name__)
            out.update({f.name: found} if found else {})
    return out


def _listed(f: dataclasses.Field[Any]) -> bool:
    """Whether the field's metadata lists its ``choices``."""
    return bool(f.metadata and f.metadata.get("choices"))


@dataclasses.dataclass(frozen=True)
class _Guarded:
    """A field held to ``values`` when each of the config's ``when`` fields (or its default) has one
    of its values."""

    field: str
    values: list[str]
    why: str
    when: When
    defaults: dict[str, Any]

    def applies(self, config: dict[str, Any]) -> bool:
        return all(  # as the schema's `if` compares
            any(jsonschema_subset.same(config.get(other, self.defaults[other]), v) for v in values)
            for other, values in self.when
        )


def _guarded_choices(cls: type, hints: dict[str, Any]) -> list[_Guarded]:
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    return [
        _Guarded(name, values, why, when, {other: fields[other].default for other, _ in when})
        for (name, when), (values, why) in code_choices.guarded_in([cls.__module__], list(fields)).items()
        if all(other in fields for other, _ in when) and _open_string(hints[name])
    ]


def _open_string(hint: Any) -> bool:
    try:
        return string_values.open_string(TypeAdapter(hint).json_schema())
    except Exception:  # noqa: BLE001 - the type check already refused such a type
        return False


def _choices_of(
    f: dataclasses.Field[Any], hint: Any, closed: tuple[list[str], str] | None, owner: str
) -> tuple[list[str], str] | None:
    try:
        type_schema = TypeAdapter(hint).json_schema()
    except Exception:  # noqa: BLE001 - the type check above already refused such a type
        return None
    allowed = field_enum(f, type_schema)
    if allowed:
        return allowed, f"{owner}.{f.name}'s choices"
    return closed if closed and string_values.open_string(type_schema) else None


def import_class(module_name: str, attr: str, loc: Location) -> Any:
    # The working directory is importable, as with `python -m`, so a project's own config models
    # work; only when the module asked for is the project's own (``_project_module``): with it on
    # sys.path for an installed one, a committed `accelerate.py` ran when `schema --export
    # trl:GRPOConfig` imported trl, which imports it.
    cwd = os.getcwd()
    added = _project_module(module_name.partition(".")[0], cwd, loc) and cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise SpecError(
            f"cannot import schema module {module_name!r}: {err}",
            location=loc,
            hint="install the package that defines it, or run from the project root",
        ) from None
    finally:
        if added:
            sys.path.remove(cwd)
    if not hasattr(module, attr):
        raise SpecError(f"module {module_name!r} has no {attr!r}", location=loc, hint="check the class name")
    return getattr(module, attr)


def _project_module(top: str, cwd: str, loc: Location) -> bool:
    """Whether the top-level module ``top`` is a module or package of the working folder, found
    without importing anything (a folder of no ``__init__.py`` is no module: an installed one comes
    first, as Python decides). One that is installed too is refused: which of them runs is not
    sweepgen's to guess (Python would take the folder's, whatever the person meant)."""
    if top in sys.modules:  # imported already: that one is the one imported again, wherever it is
        return False
    own = _folders_own(top, cwd)
    if own is None:
        return False
    if _installed_elsewhere(top, cwd, own):
        raise SpecError(
            f"`{top}` is both a module of this folder ({os.path.relpath(own, cwd)}) and an "
            "installed one: sweepgen does not guess which to import",
            location=loc,
            hint=f"rename or remove this folder's `{top}` (run from another folder to use the installed one)",
        )
    return True


def _folders_own(top: str, cwd: str) -> str | None:
    """The file of the working folder's own module ``top``, found without importing it; None."""
    try:
        own = importlib.machinery.PathFinder.find_spec(top, [cwd])
    except (ImportError, ValueError):
        return None
    return None if own is None else own.origin


def _installed_elsewhere(top: str, cwd: str, own: str) -> bool:
    """Whether ``top`` is also a builtin or an installed module other than the folder's own file."""
    if top in sys.builtin_module_names:
        return True
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != cwd]
    installed = importlib.machinery.PathFinder.find_spec(top, others)
    return installed is not None and not _same_file(installed.origin, own)


def _same_file(installed: str | None, own: str) -> bool:
    """Whether the installed module is the folder's own file (an editable install's tree of links
    to the project, setuptools' strict mode): the same code, nothing to choose between."""
    try:
        return installed is not None and os.path.samefile(installed, own)
    except OSError:
        return False


def _json_schema(spec: Spec, ref: str, loc: Location) -> Validator:
    full = project.resolve(spec.project, spec.dir, ref, what="schema file", loc=loc)
    if not os.path.exists(full):
        raise SpecError(
            f"schema file not found: {ref}", location=loc, hint="the path is relative to the spec file"
        )
    raw = project.read_regular(full, what="schema file", loc=loc, limit=spec.model.limits.input_bytes)
    schema = _parse_json(raw, ref, loc)
    try:
        jsonschema_subset.check_schema(schema)
    except RecursionError:
        raise SpecError(f"schema file {ref} is nested too deeply", location=loc) from None
    except jsonschema_subset.UnsupportedSchema as err:
        raise SpecError(
            f"schema file {ref}: {err}",
            location=loc,
            hint=err.hint or f"supported keywords: {', '.join(sorted(jsonschema_subset.SUPPORTED))}",
        ) from None
    stale = _exported_elsewhere(schema, ref, os.path.relpath(full))
    if stale is None:
        return lambda config: jsonschema_subset.validate(config, schema)
    return lambda config: [
        (path, f"{message} ({stale})") for path, message in jsonschema_subset.validate(config, schema)
    ]


def trl_command(spec: Spec) -> str | None:
    """The TRL command the spec's schema is written for: ``trl:X``'s X, or the ``source`` a schema
    file exported from one records (``sweepgen init --schema trl:X`` writes such a file); None for
    any other schema. The file is read as data."""
    ref = spec.model.schema_
    if ref is None or not ref.endswith(".json"):
        return _trl_named(ref) if ref is not None else None
    source = _exported_from(spec, ref)
    return trl_cli.command_of(source) if isinstance(source, str) else None


def _exported_from(spec: Spec, ref: str) -> object:
    """The ``source`` a schema file's export stamp records (None where it has none)."""
    loc = spec.loc(("schema",))
    full = project.resolve(spec.project, spec.dir, ref, what="schema file", loc=loc)
    if not os.path.exists(full):
        return None
    schema = _parse_json(project.read_regular(full, what="schema file", loc=loc), ref, loc)
    stamp = schema.get(schema_export.STAMP) if isinstance(schema, dict) else None
    return stamp.get("source") if isinstance(stamp, dict) else None


# `schema: trl:SFTConfig` (TRL's config class, as module:Class): the trainer it configures
_TRL_CLASS = re.compile(r"trl(?:\.[\w.]+)?:(GRPO|RLOO|SFT|DPO|KTO|Reward|Distillation)Config")


def _trl_named(ref: str) -> str | None:
    """``trl:grpo``'s ``grpo``; ``trl:SFTConfig``'s ``sft``."""
    match = _TRL_CLASS.fullmatch(ref)
    return match.group(1).lower() if match else trl_cli.command_of(ref)


def _exported_elsewhere(schema: Any, ref: str, path: str) -> str | None:
    """What to add to a refusal when the schema file was exported (``sweepgen schema --export``) from
    another release of its package than the one installed here: its keys and values are that
    release's, so a refusal may be the file's age, not the config's fault."""
    stamp = schema.get(schema_export.STAMP) if isinstance(schema, dict) else None
    package, version = (
        (stamp.get("package"), stamp.get("version")) if isinstance(stamp, dict) else (None, None)
    )
    installed = (
        trl_cli.installed_version(package) if isinstance(package, str) and isinstance(version, str) else None
    )
    if installed is None or installed == version:
        return None  # the same release, or not installed here (a lint job): nothing to compare with
    source = stamp.get("source") if isinstance(stamp, dict) else None
    again = f"`sweepgen schema --export {source} -o {path}`" if isinstance(source, str) else "export it again"
    return f"{ref} was exported from {package} {version}, {installed} is installed here: {again}"


def _parse_json(raw: bytes, ref: str, loc: Location) -> Any:
    """A schema file's bytes as JSON; anything else is an error at the spec's ``schema`` key."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise SpecError(f"schema file {ref} is not UTF-8: {err.reason}", location=loc) from None
    except RecursionError:
        raise SpecError(f"schema file {ref} is nested too deeply", location=loc) from None
    except json.JSONDecodeError as err:
        raise SpecError(
            f"schema file {ref} is not valid JSON: {err.msg} at line {err.lineno}", location=loc
        ) from None
    except ValueError as err:  # e.g. an integer longer than Python converts
        raise SpecError(f"schema file {ref} is not valid JSON: {err}", location=loc) from None


def check_schema(expansion: Expansion, validator: Validator | None) -> None:
    """Validate every variant's config with the spec's schema (pydantic model or JSON Schema)."""
    if validator is None:
        return
    spec = expansion.spec
    with total_bounded(
        f"validating the variants against {spec.model.schema_}",
        spec.loc(("schema",)),
        "fewer variants, or smaller configs (every variant's whole config is validated)",
    ):
        for variant in expansion.variants:
            # each variant's whole config is walked: 5,000 variants of a 400,000-item list took hours
            check_total()
            problems = validator(variant.config)
            if problems:
                raise _mismatch(expansion, variant, problems)


class SchemaMismatch(ValidationError):
    """A variant its schema refuses; ``problems``: what is wrong, every key named (`init` words the
    error for the config it was given, which is all the person has seen)."""

    def __init__(self, message: str, *, problems: str, **where: Any) -> None:
        super().__init__(message, **where)
        self.problems = problems


def _mismatch(expansion: Expansion, variant: Variant, problems: list[tuple[str, str]]) -> SchemaMismatch:
    """A variant's schema problems: the first at the key and layer that set it, the others named."""
    spec = expansion.spec
    # an unknown key first, in either route: a misspelled key is the cause worth showing
    problems = sorted(problems, key=lambda pm: not pm[1].startswith(_UNKNOWN_KEY))
    path, message = problems[0]
    layer = layer_of(variant, path) if path else "base"
    value = paths.get(variant.config, path) if path else paths.MISSING
    got = f"; value {show_value(value)} (set by {layer})" if value is not paths.MISSING else ""
    where = expansion.where(layer, path) if path else None
    shown = f"`{path or '<root>'}`: {message}{got}{_also(problems)}"
    return SchemaMismatch(
        f"variant {variant.name!r} does not match schema {spec.model.schema_}: {shown}",
        problems=shown,
        location=where or spec.loc(("schema",)),
        key=path or None,
        hint=_fix(message, value),
    )


# how each route names a key its schema does not have: the JSON Schema's, the dataclass's (_message)
_UNKNOWN_FIELD = "unknown field"
_UNKNOWN_KEY = (jsonschema_subset.UNKNOWN_KEY, _UNKNOWN_FIELD)


# how each route says a list was wanted: the JSON Schema's, pydantic's (the dataclass route)
_LIST_WANTED = ("expected array", "Input should be a valid list")


GENERIC_FIX = "fix the value in the spec, or the schema if it is wrong"


def _fix(message: str, value: Any) -> str:
    if isinstance(value, str) and message.startswith(_LIST_WANTED):
        return f"write it as a list: [{value}] (this field takes no single value)"
    return GENERIC_FIX


def _also(problems: list[tuple[str, str]]) -> str:
    """The problems after the first, up to SHOWN_PROBLEMS in all: every wrong key named at once, so
    a config with three typos is fixed in one round."""
    also = [f"`{p or '<root>'}`: {m}" for p, m in problems[1:SHOWN_PROBLEMS]]
    more = f"; also {'; '.join(also)}" if also else ""
    if len(problems) > SHOWN_PROBLEMS:
        more += f" (and {len(problems) - SHOWN_PROBLEMS} more problem(s))"
    return more
