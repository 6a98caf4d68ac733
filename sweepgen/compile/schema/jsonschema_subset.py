"""A small JSON Schema (draft 2020-12 subset) validator for the spec's ``schema: file.json``.

Why not the ``jsonschema`` package: it pulls compiled dependencies into a core that a CI lint job
installs. Why a subset is safe: every keyword outside ``SUPPORTED`` is rejected when the schema is
loaded, so a schema never silently validates less than its author wrote.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

import re2

from sweepgen.compile.schema import suggest

SUPPORTED = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "format",  # an annotation in draft 2020-12 (not asserted), as pydantic writes it for paths
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "anyOf",
        "allOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
    }
)
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


UNKNOWN_KEY = "key not allowed by the schema"  # how a key the schema does not have is named


class UnsupportedSchema(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


# `pattern`s run through RE2, whose matching is linear in the string: a schema comes with the pull
# request `check` reviews, and a backtracking engine (Python's `re`) spends hours on `(a+)+$`
# against forty `a`s and a `b`. RE2 refuses what it cannot match in linear time (backreferences,
# lookaround) when the schema loads; a pattern is compiled once.
_PATTERN_HINT = (
    "JSON Schema patterns are matched by RE2 (linear time): no backreferences or lookaround; "
    "see https://github.com/google/re2/wiki/Syntax"
)
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.max_mem = 8 << 20  # RE2's default: a pattern needing more is refused, not built
_RE2_OPTIONS.log_errors = False  # the error is ours to report, at the schema file


@functools.lru_cache(maxsize=1024)
def _pattern(source: str) -> re2._Regexp:
    return re2.compile(source, _RE2_OPTIONS)


def _check_pattern(source: Any, where: str) -> None:
    if not isinstance(source, str):
        raise UnsupportedSchema(f"{where}/pattern must be a string, not {type(source).__name__}")
    try:
        _pattern(source)
    except re2.error as err:
        why = err.args[0] if err.args else err
        why = why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
        raise UnsupportedSchema(f"{where}/pattern {source!r} is refused: {why}", _PATTERN_HINT) from None


def check_schema(schema: Any, where: str = "#") -> None:
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise UnsupportedSchema(f"{where} is not a schema object")
    _check_keywords(schema, where)
    if "pattern" in schema:
        _check_pattern(schema["pattern"], where)
    for sub, at in _subschemas(schema, where):
        check_schema(sub, at)


def _check_keywords(schema: dict[str, Any], where: str) -> None:
    """Only the keywords and the types this subset supports."""
    # `x-…` keys are annotations (our export's stamp among them): they never constrain a value
    unknown = sorted(k for k in set(schema) - SUPPORTED if not k.startswith("x-"))
    if unknown:
        raise UnsupportedSchema(f"{where} uses unsupported keyword(s) {', '.join(unknown)}")
    for keyword, (fits, what) in _VALUE_KINDS.items():
        if keyword in schema and not fits(schema[keyword]):
            raise UnsupportedSchema(
                f"{where}/{keyword} must be {what}, not {_json_type(schema[keyword])}",
                "the keyword's value as JSON Schema draft 2020-12 defines it "
                "(https://json-schema.org/draft/2020-12/json-schema-validation)",
            )
    _check_type_names(schema.get("type"), where)


def _check_type_names(types: Any, where: str) -> None:
    for t in types if isinstance(types, list) else [types] if types else []:
        if not isinstance(t, str) or t not in _TYPES:
            raise UnsupportedSchema(f"{where}: unknown type {t!r}")


def _finite_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    # an int is finite (math.isfinite would overflow converting one of 400 digits to a float)
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _schemas(value: Any) -> bool:
    return isinstance(value, list) and bool(value)


def _a_schema(value: Any) -> bool:
    return isinstance(value, (dict, bool))


# What each keyword's value must be. A value of another kind is refused when the schema loads: read
# at validation, it ended `check` with a traceback (`enum: 5`, `minimum: "x"`), or constrained
# nothing without a word (`properties: []`, `items: 5`, `required: "seed"` read letter by letter),
# and draft 4's `exclusiveMinimum: true` compared every value with 1.
_VALUE_KINDS: dict[str, tuple[Any, str]] = {
    "type": (lambda v: isinstance(v, (str, list)), "a type name or a list of them"),
    "enum": (lambda v: isinstance(v, list), "an array"),
    "properties": (lambda v: isinstance(v, dict), "an object of schemas"),
    "required": (lambda v: isinstance(v, list) and all(isinstance(k, str) for k in v), "an array of strings"),
    "additionalProperties": (_a_schema, "a schema"),
    "items": (_a_schema, "a schema"),
    "not": (_a_schema, "a schema"),
    **dict.fromkeys(("if", "then", "else"), (_a_schema, "a schema")),
    "anyOf": (_schemas, "a non-empty array of schemas"),
    "prefixItems": (_schemas, "a non-empty array of schemas"),
    "allOf": (_schemas, "a non-empty array of schemas"),
    "oneOf": (_schemas, "a non-empty array of schemas"),
    **dict.fromkeys(
        ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), (_finite_number, "a finite number")
    ),
    **dict.fromkeys(("minLength", "maxLength", "minItems", "maxItems"), (_count, "a non-negative integer")),
    "multipleOf": (lambda v: _finite_number(v) and v > 0, "a number above 0"),
}


def _subschemas(schema: dict[str, Any], where: str) -> list[tuple[Any, str]]:
    """Every schema nested in ``schema``, with where it sits, in the order they are checked."""
    out = [(sub, f"{where}/properties/{key}") for key, sub in (schema.get("properties") or {}).items()]
    out += [
        (schema[kw], f"{where}/{kw}")
        for kw in ("additionalProperties", "items", "not", "if", "then", "else")
        if isinstance(schema.get(kw), (dict, bool))
    ]
    out += [
        (sub, f"{where}/{kw}/{i}")
        for kw in ("prefixItems", "anyOf", "allOf", "oneOf")
        for i, sub in enumerate(schema.get(kw, []))
    ]
    return out


_BOUNDS = (
    ("minimum", operator.ge),
    ("maximum", operator.le),
    ("exclusiveMinimum", operator.gt),
    ("exclusiveMaximum", operator.lt),
)


def _bounds(value: float, schema: dict[str, Any], path: str) -> list[tuple[str, str]]:
    """A number's problems with ``schema``'s bounds and ``multipleOf`` (as python-jsonschema
    decides it: the quotient a whole number, so 2.0 is a multiple of 1)."""
    out = [
        (path, f"violates {kw} {schema[kw]}")
        for kw, ok in _BOUNDS
        if kw in schema and not ok(value, schema[kw])
    ]
    if "multipleOf" in schema and not _multiple(value, schema["multipleOf"]):
        out.append((path, f"is not a multiple of {schema['multipleOf']}"))
    return out


def _multiple(value: float, step: float) -> bool:
    quotient = value / step
    return math.isfinite(quotient) and quotient == int(quotient)


def validate(  # noqa: C901, PLR0912 - one branch per JSON Schema keyword: a table to read, not to split
    value: Any, schema: Any, path: str = ""
) -> list[tuple[str, str]]:
    """Problems as (dotted path, message); empty when ``value`` matches."""
    if schema is True:
        return []
    if schema is False:
        return [(path, "no value is allowed here")]
    out: list[tuple[str, str]] = []
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_TYPES[t](value) for t in names):
            return [(path, f"expected {' or '.join(names)}, got {_json_type(value)}{_quoted(value, names)}")]
    if "enum" in schema and not any(same(value, e) for e in schema["enum"]):
        out.append((path, not_one_of(value, schema)))
    if "const" in schema and not same(value, schema["const"]):
        out.append((path, f"must be {schema['const']!r}"))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        out.extend(_bounds(value, schema, path))
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            out.append((path, f"shorter than {schema['minLength']}"))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append((path, f"longer than {schema['maxLength']}"))
        if "pattern" in schema and _pattern(schema["pattern"]).search(value) is None:
            out.append((path, f"does not match {schema['pattern']!r}"))
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append((path, f"fewer than {schema['minItems']} items"))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append((path, f"more than {schema['maxItems']} items"))
        out.extend(_items(value, schema, path))
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                out.append((_join(path, key), "required key is missing"))
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub = _join(path, key)
            if key in props:
                out.extend(validate(item, props[key], sub))
            elif extra is False:
                close = suggest.closest_key(str(key), props)
                maybe = f" (did you mean `{close}`?)" if close else ""
                out.append((sub, UNKNOWN_KEY + maybe))
            elif isinstance(extra, dict):
                out.extend(validate(item, extra, sub))
    for sub in schema.get("allOf", []):
        out.extend(validate(value, sub, path))
    if "anyOf" in schema and not any(not validate(value, s, path) for s in schema["anyOf"]):
        out.append((path, _none_of(value, schema)))
    if "oneOf" in schema and sum(not validate(value, s, path) for s in schema["oneOf"]) != 1:
        out.append((path, "must match exactly one of oneOf"))
    if "not" in schema and not validate(value, schema["not"], path):
        out.append((path, _negated(schema["not"])))
    out.extend(_conditional(value, schema, path))
    return out


def _negated(schema: Any) -> str:
    """The refusal of a value its ``not`` schema matches, with that schema's ``$comment`` (why)."""
    why = schema.get("$comment") if isinstance(schema, dict) else None
    return "matches a schema under `not`" + (f" ({why})" if isinstance(why, str) else "")


def _conditional(value: Any, schema: dict[str, Any], path: str) -> list[tuple[str, str]]:
    """``if``/``then``/``else``: the ``if`` schema only chooses (its failures are no problem)."""
    if "if" not in schema:
        return []
    branch = schema.get("then" if not validate(value, schema["if"], path) else "else", True)
    return validate(value, branch, path)


def _items(value: list[Any], schema: dict[str, Any], path: str) -> list[tuple[str, str]]:
    """Item i against ``prefixItems[i]`` (a tuple's places: pydantic's ``tuple[float, float]``, as
    TRL's RLOOConfig.reward_clip_range), the items after them against ``items``."""
    prefix = schema.get("prefixItems", [])
    out: list[tuple[str, str]] = []
    for i, item in enumerate(value):
        sub = prefix[i] if i < len(prefix) else schema.get("items", True)
        out.extend((p or path, f"item {i}: {m}") for p, m in validate(item, sub, path))
    return out


def _quoted(value: Any, names: list[str]) -> str:
    """How to fix a number or boolean written in quotes (``lr: "1e-5"``): a trainer's argparse may
    convert it, the schema does not, and neither does a comparison of values."""
    meant = next((name for name in names if _spells(name, value)), None)
    if meant is None and "boolean" in names:
        return _yaml11_word(value)
    return f" (`{value}` in quotes is text: write it without quotes for the {meant})" if meant else ""


# words PyYAML (YAML 1.1, as TRL and most trainers load a config) reads as booleans; YAML 1.2, as
# sweepgen reads every config, reads them as text: `use_peft: yes` is the string "yes" here
_YAML11_BOOLEANS = {"yes": "true", "on": "true", "no": "false", "off": "false"}


def _yaml11_word(value: Any) -> str:
    meant = _YAML11_BOOLEANS.get(value.strip().lower()) if isinstance(value, str) else None
    if meant is None:
        return ""
    return (
        f" (`{value}` is text in YAML 1.2, as sweepgen reads configs, though PyYAML reads a boolean: "
        f"write {meant})"
    )


def _spells(name: str, value: Any) -> bool:
    spelled = _SPELLED.get(name)
    return spelled is not None and isinstance(value, str) and spelled(value.strip())


def _spelled_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _spelled_integer(text: str) -> bool:
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit()


_SPELLED = {
    "boolean": lambda text: text.lower() in ("true", "false"),
    "integer": _spelled_integer,
    "number": _spelled_number,
}


def _none_of(value: Any, schema: dict[str, Any]) -> str:
    alternatives = schema["anyOf"]
    told = _misspelled_choice(value, schema) if isinstance(value, str) else _list_items_refused(value, schema)
    if told is not None:
        return told
    shapes = " or ".join(dict.fromkeys(_shape(s) for s in alternatives))
    return f"expected {shapes}, got {_json_type(value)}{_quoted(value, _type_names(alternatives))}"


def _list_items_refused(value: Any, schema: dict[str, Any]) -> str | None:
    """A list against the one list alternative of a field the code closes item by item
    (``loss_type: [sigmoid, hinnge]`` in DPO's ``str | list[str]``, its ``$comment`` why): what
    that alternative refuses, item by item, and why."""
    lists = [s for s in schema["anyOf"] if isinstance(s, dict) and s.get("type") == "array"]
    closed = len(lists) == 1 and isinstance(value, list) and "$comment" in schema
    problems = [m for _, m in validate(value, lists[0])] if closed else []
    return "; ".join(problems) + f" ({schema['$comment']})" if problems else None


def _misspelled_choice(value: str, schema: dict[str, Any]) -> str | None:
    """A string outside the one alternative of listed strings: its values, why, a did-you-mean."""
    listed = [s for s in schema["anyOf"] if isinstance(s, dict) and "enum" in s and _strings_only(s)]
    if len(listed) != 1:
        return None
    others = [_shape(s) for s in schema["anyOf"] if s is not listed[0]]
    why = schema.get("$comment", listed[0].get("$comment"))
    return not_one_of(value, {**listed[0], "$comment": why}, others)


def _type_names(alternatives: list[Any]) -> list[str]:
    """The one type each alternative names, where it names one (``{"type": "number"}``)."""
    return [s["type"] for s in alternatives if isinstance(s, dict) and isinstance(s.get("type"), str)]


def not_one_of(value: Any, schema: dict[str, Any], others: Sequence[str] = ()) -> str:
    """A value outside ``enum``: the values, the closest one to a misspelled string, and why (the
    schema's ``$comment``, e.g. the line of TRL's code that raises for any other value)."""
    allowed = schema["enum"]
    close = (
        suggest.closest_key(value, [e for e in allowed if isinstance(e, str)])
        if isinstance(value, str)
        else None
    )
    why = f" ({schema['$comment']})" if isinstance(schema.get("$comment"), str) else ""
    also = "".join(f" or {o}" for o in dict.fromkeys(others))
    return f"must be one of {allowed!r}{also}{why}" + (f"; did you mean {close!r}?" if close else "")


def _json_type(value: Any) -> str:
    """The JSON name of a value's type (``string``, not ``str``; ``array of integer``), as a schema
    spells the expected one."""
    if isinstance(value, list) and value:
        return "array of " + " and ".join(dict.fromkeys(_json_type(v) for v in value))
    return next((name for name in _TYPE_ORDER if _TYPES[name](value)), type(value).__name__)


_TYPE_ORDER = ("null", "boolean", "integer", "number", "string", "array", "object")


def _shape(schema: Any) -> str:
    """A schema in a few words (``array of string``), to name the alternatives a value matched none of."""
    if not isinstance(schema, dict):
        return "any value" if schema is True else "no value"
    if "enum" in schema:
        return f"one of {schema['enum']!r}"
    if "const" in schema:
        return repr(schema["const"])
    names = _listed_types(schema)
    if names == ["array"]:
        return _array_shape(schema)
    return " or ".join(names) or "a value matching its schema"


def _array_shape(schema: dict[str, Any]) -> str:
    if schema.get("prefixItems"):
        return f"[{', '.join(_shape(s) for s in schema['prefixItems'])}]"
    return f"array of {_shape(schema['items'])}" if "items" in schema else "array"


def _strings_only(schema: dict[str, Any]) -> bool:
    return _listed_types(schema) == ["string"]


def _listed_types(schema: dict[str, Any]) -> list[Any]:
    """The schema's ``type`` as a list (empty where it has none)."""
    types = schema.get("type")
    return types if isinstance(types, list) else [types] if types else []


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def same(a: Any, b: Any) -> bool:
    # JSON Schema equality: 1 == 1.0, but true != 1
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)
