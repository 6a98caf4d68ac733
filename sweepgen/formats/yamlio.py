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
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from sweepgen.errors import SECOND_DOCUMENT, SECOND_DOCUMENT_SAID, Location, SpecError

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

# Bounds on what a small file can make us build (DESIGN: every input-controlled cost has a limit).
# Expanded nodes count an alias once per use, so a 1 KB "billion laughs" file is refused at once
# instead of making every later walk of the data exponential. A spec can raise the node limit with
# `limits: {yaml_nodes: N}`; no real config nests 100 levels, and Python's own recursion limit
# (about 1000 frames) would end deeper data in a traceback somewhere downstream.
MAX_NODES = 1_000_000
MAX_DEPTH = 100
# Python refuses to convert longer decimal strings (CVE-2020-10735); a longer integer in a config
# could never be written back out, so it is an error where it is read.
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300

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
    nodes: int = 0  # nodes after alias expansion (an alias counts its whole target again)

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


def plain_value(text: str) -> Any:
    """What ``text`` reads as written as a plain (unquoted, untagged) YAML 1.2 scalar."""
    return _implicit(text)


def _implicit(text: str) -> Any:
    """The YAML 1.2 core schema for an untagged plain scalar."""
    for pattern, value_of in _CORE_SCHEMA:
        if pattern.match(text):
            return value_of(text)
    return text


def _int(text: str, digits: float, base: int) -> int:
    """An integer no longer than ``MAX_INT_DIGITS`` decimal digits (``digits``: about how many)."""
    _check_int_size(digits)
    return int(text, base)


def _inf(text: str) -> float:
    return -math.inf if text.startswith("-") else math.inf


# (pattern, the value of a text it matches), tried in order; a plain scalar matching none is a string
_CORE_SCHEMA: tuple[tuple[re.Pattern[str], Callable[[str], Any]], ...] = (
    (_NULL, lambda _text: None),
    (_BOOL_TRUE, lambda _text: True),
    (_BOOL_FALSE, lambda _text: False),
    (_INT10, lambda text: _int(text, len(text.lstrip("+-")), 10)),
    (_INT8, lambda text: _int(text[2:], len(text) * 0.91, 8)),  # an octal digit is 0.9 decimal digits
    (_INT16, lambda text: _int(text[2:], len(text) * 1.21, 16)),  # a hex digit is 1.2 decimal digits
    (_FLOAT, float),
    (_INF, _inf),
    (_NAN, lambda _text: math.nan),
)


class _IntTooLong(ValueError):
    pass


def _check_int_size(digits: float) -> None:
    if digits > MAX_INT_DIGITS:
        raise _IntTooLong(int(digits))


def _scalar(text: str, tag: str, loc: Location) -> Any:
    try:
        return _implicit(text) if tag == _PLAIN else _explicit(text, tag, loc)
    except _IntTooLong as err:
        raise SpecError(
            f"integer with about {err.args[0]} digits is longer than the {MAX_INT_DIGITS} digits allowed",
            location=loc,
            hint="write it as a float (e.g. 1.0e+5000 reads as inf) or as a quoted string",
        ) from None


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

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else _STR
        tag: str = super().resolve(kind, value, implicit)  # PyYAML's resolver returns the tag
        return tag


def loads(text: str, path: str, *, string_keys: bool = True, max_nodes: int | None = MAX_NODES) -> Doc:
    """Parse one YAML document. Duplicate keys, non-string keys and unknown tags are errors.

    More than ``max_nodes`` nodes after alias expansion, or nesting deeper than ``MAX_DEPTH``, is an
    error; ``max_nodes=None`` only counts (``Doc.nodes``), for a caller that checks its own limit.
    """
    try:
        node = yaml.compose(text, Loader=_Composer)
    except RecursionError:  # the pure-Python composer recurses once per nesting level
        raise _too_deep(Location(path)) from None
    except yaml.MarkedYAMLError as err:
        raise _syntax_error(err, path) from None
    except yaml.YAMLError as err:  # e.g. a second document, or bad bytes
        raise SpecError(
            f"YAML error: {err}", location=Location(path), hint="a file must hold exactly one YAML document"
        ) from None
    doc = Doc(path=path, data=None)
    if node is not None:
        doc.data = _Builder(doc, string_keys, max_nodes).build(node, ())
    return doc


def _syntax_error(err: yaml.MarkedYAMLError, path: str) -> SpecError:
    """PyYAML's syntax error at its mark, with where the construct it was reading started."""
    mark = err.problem_mark or err.context_mark
    loc = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path)
    if err.problem == SECOND_DOCUMENT:  # valid YAML, not a syntax error
        return SpecError(
            f"the file {SECOND_DOCUMENT_SAID}",
            location=loc,
            hint="a file must hold exactly one YAML document: remove the `---` and what follows, or move it",
        )
    problem = err.problem or err.context or "invalid YAML"
    if err.context and err.context_mark is not None and err.problem:
        problem += f" ({err.context} started at line {err.context_mark.line + 1})"
    return SpecError(
        f"YAML syntax error: {problem}",
        location=loc,
        hint="fix the YAML syntax (indentation, quotes, colons)",
    )


def _too_deep(loc: Location) -> SpecError:
    return SpecError(
        f"YAML nested more than {MAX_DEPTH} levels deep",
        location=loc,
        hint="flatten the data; configs are a few levels of mappings",
    )


def _too_many_nodes(count: int, limit: int, loc: Location) -> SpecError:
    return SpecError(
        f"YAML expands to more than {limit:,} nodes"
        + (f" ({count:,})" if count < 10**15 else "")
        + " (aliases count once per use)",
        location=loc,
        hint="a YAML alias bomb? Otherwise raise the limit in the spec: `limits: {yaml_nodes: N}`",
    )


_BUILDING = object()


class _Builder:
    """Builds Python data from composed nodes, counting expanded nodes and depth as it goes."""

    def __init__(self, doc: Doc, string_keys: bool, max_nodes: int | None) -> None:
        self.doc = doc
        self.string_keys = string_keys
        self.max_nodes = max_nodes
        self.built: dict[int, Any] = {}
        self.deepest = 0  # the deepest path length seen in the subtree being built

    def count(self, n: int, loc: Location) -> None:
        self.doc.nodes += n
        if self.max_nodes is not None and self.doc.nodes > self.max_nodes:
            raise _too_many_nodes(self.doc.nodes, self.max_nodes, loc)

    def build(self, node: yaml.Node, path: Path) -> Any:
        return _build(node, path, self.doc, self.string_keys, self.built, self)


def _build(
    node: yaml.Node, path: Path, doc: Doc, string_keys: bool, built: dict[int, Any], builder: _Builder
) -> Any:
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    doc.marks[path] = (line, col)
    loc = Location(doc.path, line, col)
    if len(path) > MAX_DEPTH:
        raise _too_deep(loc)
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
            # the shared subtree is as deep as it was where first built; count its depth here too
            if len(path) + done[3] > MAX_DEPTH:
                raise _too_deep(loc)
            builder.deepest = max(builder.deepest, len(path) + done[3])
            builder.count(done[2], loc)
            return done[1]
        built[id(node)] = _BUILDING
        before = doc.nodes
        builder.count(1, loc)
        outer, builder.deepest = builder.deepest, len(path)
        value = _build_collection(node, path, doc, string_keys, built, loc, builder)
        built[id(node)] = (node, value, doc.nodes - before, builder.deepest - len(path))
        builder.deepest = max(outer, builder.deepest)
        return value
    builder.deepest = max(builder.deepest, len(path))
    builder.count(1, loc)
    return _scalar(node.value, node.tag, loc)


def _build_collection(
    node: yaml.Node,
    path: Path,
    doc: Doc,
    string_keys: bool,
    built: dict[int, Any],
    loc: Location,
    builder: _Builder,
) -> Any:
    if isinstance(node, yaml.SequenceNode):
        _check_tag(node, "tag:yaml.org,2002:seq", loc)
        return [
            _build(child, path + (i,), doc, string_keys, built, builder) for i, child in enumerate(node.value)
        ]
    if isinstance(node, yaml.MappingNode):
        _check_tag(node, "tag:yaml.org,2002:map", loc)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            kloc = Location(doc.path, key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            key = _key(key_node, kloc, string_keys)
            if key in out:
                first = doc.key_marks[path + (key,)]
                raise SpecError(
                    f"duplicate key {key!r} (first defined at line {first[0]})",
                    location=kloc,
                    hint="remove one of them; YAML would silently keep the last",
                )
            doc.key_marks[path + (key,)] = (kloc.line, kloc.col)
            out[key] = _build(value_node, path + (key,), doc, string_keys, built, builder)
        return out
    raise SpecError(f"unsupported YAML node {type(node).__name__}", location=loc)  # pragma: no cover


def _key(key_node: yaml.Node, kloc: Location, string_keys: bool) -> Any:
    """A mapping key: a scalar, never a merge key (``<<``), a string when ``string_keys``."""
    if not isinstance(key_node, yaml.ScalarNode):
        raise SpecError("a mapping key must be a scalar", location=kloc, hint="use a plain string key")
    if key_node.tag == _PLAIN and key_node.value == "<<":
        raise SpecError(
            "YAML merge keys (`<<`) are not supported",
            location=kloc,
            hint="write the keys out, or use `base: {include: [...]}` to share config",
        )
    key = _scalar(key_node.value, key_node.tag, kloc)
    if string_keys and not isinstance(key, str):
        raise SpecError(
            f"mapping key {key_node.value!r} is a {type(key).__name__}, not a string",
            location=kloc,
            hint=f'quote it: "{key_node.value}"',
        )
    return key


def _check_tag(node: yaml.Node, expected: str, loc: Location) -> None:
    if node.tag != expected:
        raise SpecError(
            f"unsupported YAML tag {node.tag!r}",
            location=loc,
            hint="sweepgen reads plain YAML data only; remove the tag",
        )


def load(
    path: str, display: str | None = None, *, string_keys: bool = True, max_nodes: int | None = MAX_NODES
) -> Doc:
    """Read and parse a YAML file; ``display`` is the path shown in messages (default: ``path``)."""
    shown = display or path
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise SpecError(f"file not found: {shown}", location=Location(shown)) from None
    except OSError as err:
        raise SpecError(f"cannot read {shown}: {err.strerror}", location=Location(shown)) from None
    return loads(decode_utf8(raw, shown), shown, string_keys=string_keys, max_nodes=max_nodes)


def decode_utf8(raw: bytes, shown: str) -> str:
    """UTF-8 text, or an error at the line and column of the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SpecError(
            f"not UTF-8 text: byte 0x{raw[err.start]:02x} ({err.reason})",
            location=Location.at_offset(shown, raw, err.start),
            hint="save the file as UTF-8",
        ) from None
