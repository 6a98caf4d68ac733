"""YAML reading with the YAML 1.2 rules that matter for ML configs, keeping where every node came from.

PyYAML implements YAML 1.1, whose implicit typing bites ML configs: ``1e-5`` is read as a *string*
(1.1 floats need a dot), ``on``/``no``/``yes`` become booleans, ``2025_05_15`` becomes an int and a
duplicated key silently overwrites the first. We keep PyYAML's parser and composer (fast, C-backed)
but resolve scalars with the YAML 1.2 core schema and build Python objects ourselves, recording the
1-based line/column of every key and value so later errors can name ``file:line:col``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from sweepgen.errors import Location, SpecError

Path = tuple[str | int, ...]  # a path into the loaded data: mapping keys and sequence indices

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL_TRUE = re.compile(r"^(?:true|True|TRUE)$")
_BOOL_FALSE = re.compile(r"^(?:false|False|FALSE)$")
_INT10 = re.compile(r"^[-+]?[0-9]+$")
_INT8 = re.compile(r"^0o[0-7]+$")
_INT16 = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")

_STR = "tag:yaml.org,2002:str"
_KNOWN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


@dataclass
class Doc:
    """Loaded YAML data plus the 1-based (line, col) of each value and each mapping key, by path."""

    path: str  # the file as the user should see it in messages
    data: Any
    marks: dict[Path, tuple[int, int]] = field(default_factory=dict)
    key_marks: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def loc(self, path: Path = (), *, key: bool = False) -> Location:
        """Where ``path`` is written; falls back to the closest enclosing node that has a mark."""
        path = tuple(path)
        while True:
            table = self.key_marks if key and path in self.key_marks else self.marks
            if path in table:
                line, col = table[path]
                return Location(self.path, line, col)
            if not path:
                return Location(self.path)
            path = path[:-1]


_PLAIN = "sweepgen:plain"  # marks a plain scalar without an explicit tag: typed by 1.2 rules


def _implicit(text: str) -> Any:
    """The YAML 1.2 core schema for an untagged plain scalar."""
    if _NULL.match(text):
        return None
    if _BOOL_TRUE.match(text):
        return True
    if _BOOL_FALSE.match(text):
        return False
    if _INT10.match(text):
        return int(text)
    if _INT8.match(text):
        return int(text[2:], 8)
    if _INT16.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.match(text):
        return math.nan
    return text


def _explicit(text: str, tag: str, loc: Location) -> Any:
    """A scalar with an explicit standard tag such as ``!!str 1e-5`` or ``!!float 3``."""
    if tag not in _KNOWN_TAGS or tag in ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
        raise SpecError(
            f"unsupported YAML tag {tag!r}",
            location=loc,
            hint="sweepgen reads plain YAML data only; remove the tag",
        )
    if tag == _STR:
        return text
    value = _implicit(text)
    kind = tag.rsplit(":", 1)[1]
    if kind == "float" and type(value) is int:
        return float(value)
    ok = {
        "null": value is None,
        "bool": type(value) is bool,
        "int": type(value) is int,
        "float": type(value) is float,
    }[kind]
    if not ok:
        raise SpecError(
            f"{text!r} is not a valid {kind}",
            location=loc,
            hint=f"remove the `!!{kind}` tag or write a {kind}",
        )
    return value


_Base = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader


class _Composer(_Base):  # type: ignore[misc,valid-type]
    """Composes nodes only. Untagged scalars get a marker tag instead of PyYAML's 1.1 guess."""

    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return super().resolve(kind, value, implicit)


def loads(text: str, path: str, *, string_keys: bool = True) -> Doc:
    """Parse one YAML document. Duplicate keys, non-string keys and unknown tags are errors."""
    try:
        node = yaml.compose(text, Loader=_Composer)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        loc = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path)
        problem = err.problem or err.context or "invalid YAML"
        if err.context and err.context_mark is not None and err.problem:
            problem += f" ({err.context} started at line {err.context_mark.line + 1})"
        raise SpecError(
            f"YAML syntax error: {problem}",
            location=loc,
            hint="fix the YAML syntax (indentation, quotes, colons)",
        ) from None
    except yaml.YAMLError as err:  # e.g. a second document, or bad bytes
        raise SpecError(
            f"YAML error: {err}", location=Location(path), hint="a file must hold exactly one YAML document"
        ) from None
    doc = Doc(path=path, data=None)
    if node is not None:
        doc.data = _build(node, (), doc, string_keys, {})
    return doc


_BUILDING = object()


def _build(node: yaml.Node, path: Path, doc: Doc, string_keys: bool, built: dict[int, Any]) -> Any:
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    doc.marks[path] = (line, col)
    loc = Location(doc.path, line, col)
    if not isinstance(node, yaml.ScalarNode):
        # An alias is the same node again: share the object built the first time (configs are never
        # mutated in place), so `&a`/`*a` chains cannot blow up exponentially, and refuse cycles.
        done = built.get(id(node))
        if done is _BUILDING:
            raise SpecError(
                "a YAML alias refers to the node that contains it",
                location=loc,
                hint="configs must be trees; remove the recursive alias",
            )
        if done is not None:
            return done[1]
        built[id(node)] = _BUILDING
        value = _build_collection(node, path, doc, string_keys, built, loc)
        built[id(node)] = (node, value)
        return value
    if node.tag == _PLAIN:
        return _implicit(node.value)
    return _explicit(node.value, node.tag, loc)


def _build_collection(
    node: yaml.Node, path: Path, doc: Doc, string_keys: bool, built: dict[int, Any], loc: Location
) -> Any:
    if isinstance(node, yaml.SequenceNode):
        _check_tag(node, "tag:yaml.org,2002:seq", loc)
        return [_build(child, path + (i,), doc, string_keys, built) for i, child in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        _check_tag(node, "tag:yaml.org,2002:map", loc)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            kloc = Location(doc.path, key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if not isinstance(key_node, yaml.ScalarNode):
                raise SpecError(
                    "a mapping key must be a scalar", location=kloc, hint="use a plain string key"
                )
            if key_node.tag == _PLAIN and key_node.value == "<<":
                raise SpecError(
                    "YAML merge keys (`<<`) are not supported",
                    location=kloc,
                    hint="write the keys out, or use `base: {include: [...]}` to share config",
                )
            if key_node.tag == _PLAIN:
                key = _implicit(key_node.value)
            else:
                key = _explicit(key_node.value, key_node.tag, kloc)
            if string_keys and not isinstance(key, str):
                raise SpecError(
                    f"mapping key {key_node.value!r} is a {type(key).__name__}, not a string",
                    location=kloc,
                    hint=f'quote it: "{key_node.value}"',
                )
            if key in out:
                first = doc.key_marks[path + (key,)]
                raise SpecError(
                    f"duplicate key {key!r} (first defined at line {first[0]})",
                    location=kloc,
                    hint="remove one of them; YAML would silently keep the last",
                )
            doc.key_marks[path + (key,)] = (kloc.line, kloc.col)
            out[key] = _build(value_node, path + (key,), doc, string_keys, built)
        return out
    raise SpecError(f"unsupported YAML node {type(node).__name__}", location=loc)  # pragma: no cover


def _check_tag(node: yaml.Node, expected: str, loc: Location) -> None:
    if node.tag != expected:
        raise SpecError(
            f"unsupported YAML tag {node.tag!r}",
            location=loc,
            hint="sweepgen reads plain YAML data only; remove the tag",
        )


def load(path: str, display: str | None = None, *, string_keys: bool = True) -> Doc:
    """Read and parse a YAML file; ``display`` is the path shown in messages (default: ``path``)."""
    shown = display or path
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise SpecError(f"file not found: {shown}", location=Location(shown)) from None
    except UnicodeDecodeError as err:
        raise SpecError(f"not UTF-8 text: {err.reason}", location=Location(shown)) from None
    except OSError as err:
        raise SpecError(f"cannot read {shown}: {err.strerror}", location=Location(shown)) from None
    return loads(text, shown, string_keys=string_keys)
