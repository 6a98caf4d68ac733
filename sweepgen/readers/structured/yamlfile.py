"""Read a YAML file that is not a sweepgen spec, as the program that consumes it would.

Trainers read their YAML through PyYAML or OmegaConf, which follow YAML 1.1: ``on`` is True and
``100_000`` is an int there, a string in YAML 1.2. So foreign files are read as 1.1 by default
(``version="1.2"`` for the spec reader's rules) and every plain scalar the two versions read
differently is listed as a warning, so a surprising verdict can be explained. Anchors, aliases and
merge keys (``<<``) work as in PyYAML; a duplicated key is still an error (PyYAML keeps the last one
silently, OmegaConf refuses it). A Hydra ``defaults:`` list is compared as group -> option.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

import yaml

from sweepgen.errors import SECOND_DOCUMENT, SECOND_DOCUMENT_SAID, ConfigError, Location
from sweepgen.readers.diff import strictly_equal
from sweepgen.readers.model import BIG_DIGITS, NotEvaluated, Path, ReadResult, big_int
from sweepgen.readers.structured import yamldocs
from sweepgen.readers.structured.omegayaml import plain_scalar_omegaconf, resolve_interpolations

VERSIONS = ("1.1", "1.2", "omegaconf")
_PLAIN = "sweepgen:plain"
_STD = "tag:yaml.org,2002:"
_Base: Any = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader


class _Composer(_Base):  # type: ignore[misc]
    """Composes nodes only; untagged plain scalars are marked so that either version can type them."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            return _PLAIN if implicit[0] else _STD + "str"
        return super().resolve(kind, value, implicit)


_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()


# The YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution), as the spec reader
# in sweepgen.formats.yamlio applies it; kept here so that the readers depend on no private name there.
_CORE: list[tuple[re.Pattern[str], Callable[[str], Any]]] = [
    (re.compile(r"~|null|Null|NULL|"), lambda t: None),
    (re.compile(r"true|True|TRUE"), lambda t: True),
    (re.compile(r"false|False|FALSE"), lambda t: False),
    (re.compile(r"[-+]?[0-9]+"), lambda t: big_int(t) or int(t)),  # past 4,000 digits: exact text
    (re.compile(r"0o[0-7]+"), lambda t: int(t[2:], 8)),
    (re.compile(r"0x[0-9a-fA-F]+"), lambda t: int(t[2:], 16)),
    (re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"), float),
    (re.compile(r"[-+]?\.(?:inf|Inf|INF)"), lambda t: -math.inf if t.startswith("-") else math.inf),
    (re.compile(r"\.(?:nan|NaN|NAN)"), lambda t: math.nan),
]


@functools.lru_cache(maxsize=4096)  # every command-line word is typed by it; values are immutable
def plain_scalar_12(text: str) -> Any:
    """The YAML 1.2 core schema's reading of an untagged plain scalar."""
    for pattern, build in _CORE:
        if pattern.fullmatch(text):
            return build(text)
    return text


_implicit_12 = plain_scalar_12


class _Refused:
    """PyYAML's reading of a plain scalar it resolves to a type it cannot build (``=`` is YAML
    1.1's ``!!value``, ``<<`` a merge key where a value stands): ``safe_load`` raises there."""

    def __repr__(self) -> str:
        return "an error (PyYAML cannot build it)"


REFUSED = _Refused()


def _implicit_11(text: str) -> Any:
    """PyYAML's (YAML 1.1) reading of an untagged plain scalar."""
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return _CONSTRUCTOR.construct_object(yaml.ScalarNode(tag, text))


def _built(reading: Callable[[str], Any], text: str) -> Any:
    try:
        return reading(text)
    except yaml.constructor.ConstructorError:
        return REFUSED


def read_yaml(
    text: str, path: str, version: str = "1.1", *, raw: bool = False, streams: bool = False
) -> ReadResult:
    """``raw``: no interpolation resolved, the ``defaults:`` list as written (to compose files).
    ``streams``: a file of several documents is read as them (``yamldocs``); else it is refused,
    as ``yaml.safe_load`` and ``OmegaConf.load`` refuse it (OmegaConf never reads one)."""
    if version not in VERSIONS:
        raise ConfigError(f"unknown YAML reading {version!r}", hint="use --yaml 1.1, 1.2 or omegaconf")
    nodes = _compose(text, path, several=streams and not raw and version != "omegaconf")
    if version != "1.2":
        _refuse_what_pyyaml_refuses(text, path)
    if len(nodes) > 1:
        return _read_documents(nodes, path, version)
    node = nodes[0] if nodes else None
    result = _read_document(node, path, version)
    if raw or node is None:
        return result
    if version == "omegaconf":
        result.data = resolve_interpolations(result.data, path)
    _read_defaults_by_group(result)
    return result


def json_lines(text: str, path: str) -> dict[Path, int] | None:
    """The line of every path of a JSON document (``text``, which ``json.loads`` read), as
    ``read_yaml(text, path, "1.2").lines`` finds them, from the node tree alone: no scalar is typed
    (a 10 MB ``tokenizer.json`` read in 9.8 s where the full reading took 14.1). None where a key
    is not a double-quoted string (``read_yaml`` then decides)."""
    nodes = _compose(text, path, several=False)
    lines: dict[Path, int] = {}
    stack: list[tuple[yaml.Node, Path]] = [(nodes[0], ())] if nodes else []
    while stack:
        node, at = stack.pop()
        lines.setdefault(at, node.start_mark.line + 1)
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, at + (index,)) for index, child in enumerate(node.value))
            continue
        for key_node, value_node in node.value if isinstance(node, yaml.MappingNode) else ():
            if not (isinstance(key_node, yaml.ScalarNode) and key_node.style == '"'):
                return None
            lines[at + (key_node.value,)] = key_node.start_mark.line + 1
            stack.append((value_node, at + (key_node.value,)))
    return lines


def _read_document(node: yaml.Node | None, path: str, version: str) -> ReadResult:
    """One document (None: an empty file) built, nothing resolved yet."""
    result = ReadResult(path, None)
    if node is not None:
        try:
            result.data = _Builder(result, version).build(node, ())
        except RecursionError:
            raise ConfigError("YAML nested too deeply to read", location=Location(path)) from None
    if result.data is None and version == "omegaconf":
        result.data = {}  # OmegaConf.load reads an empty (or null) document as an empty config
    return result


def _read_documents(nodes: list[yaml.Node], path: str, version: str) -> ReadResult:
    """A stream of several documents: each built as its own file is (anchors do not cross ``---``)."""
    result = ReadResult(path, None)
    builder = _Builder(result, version)
    try:
        built = [builder.build(node, (yamldocs.DOCUMENTS, index)) for index, node in enumerate(nodes)]
    except RecursionError:
        raise ConfigError("YAML nested too deeply to read", location=Location(path)) from None
    yamldocs.several(built, result)
    return result


def _read_defaults_by_group(result: ReadResult) -> None:
    """A Hydra ``defaults:`` list read as group -> option (``_hydra_defaults``), each group at its
    entry's line; its order is noted as meaning (``ReadResult.ordered``)."""
    listed = result.data
    result.data = _hydra_defaults(listed)
    if result.data is listed:
        return
    result.ordered = (("defaults",),)
    for index, key in enumerate(result.data["defaults"]):  # `_self_` added last: at the list
        result.lines[("defaults", key)] = result.lines.get(("defaults", index), result.line_of(("defaults",)))


def _compose(text: str, path: str, *, several: bool) -> list[yaml.Node]:
    """The document's node tree (none for an empty file), or each document's where ``several``;
    YAML errors name where they are."""
    try:
        if several:
            return list(yaml.compose_all(text, Loader=_Composer))
        node = yaml.compose(text, Loader=_Composer)
        return [] if node is None else [node]
    except yaml.MarkedYAMLError as err:
        loc = _marked(err, path)
        if err.problem == SECOND_DOCUMENT:  # valid YAML, not a syntax error
            raise ConfigError(
                f"the file {SECOND_DOCUMENT_SAID}",
                location=loc,
                hint="OmegaConf.load (and Hydra) reads one document per file: put each in a file of "
                "its own (read as YAML 1.1, with --yaml 1.1, a diff compares a stream's documents)",
            ) from None
        raise ConfigError(
            f"YAML syntax error: {err.problem or err.context or 'invalid YAML'}",
            location=loc,
            hint="fix the YAML syntax (indentation, quotes, colons)",
        ) from None
    except yaml.YAMLError as err:
        raise ConfigError(
            f"YAML error: {err}", location=Location(path), hint="a config file holds one YAML document"
        ) from None
    except RecursionError:
        raise ConfigError("YAML nested too deeply to read", location=Location(path)) from None


def _marked(err: yaml.MarkedYAMLError, path: str) -> Location:
    mark = err.problem_mark or err.context_mark
    return Location(path, mark.line + 1, mark.column + 1) if mark else Location(path)


# libyaml reads these where PyYAML's own scanner and parser refuse them (a tab after a token, `?` in
# a flow collection's plain scalar): only texts holding one are parsed a second time
_PYYAML_STRICTER = ("\t", "?")


def _refuse_what_pyyaml_refuses(text: str, path: str) -> None:
    """Trainers load YAML with ``yaml.safe_load`` and OmegaConf with a pure-Python PyYAML loader,
    not with libyaml: a file libyaml reads but they refuse would be compared as a config that loads
    (``lr: 1e-5<TAB># x`` equal to ``lr: 1e-5``) while the run crashes on it."""
    if not any(char in text for char in _PYYAML_STRICTER):
        return
    try:
        for _event in yaml.parse(text, Loader=yaml.SafeLoader):
            pass
    except yaml.MarkedYAMLError as err:
        raise ConfigError(
            f"PyYAML cannot load this file: {err.problem or err.context}",
            location=_marked(err, path),
            hint="yaml.safe_load and OmegaConf refuse it (libyaml would read it): put spaces for a tab "
            "outside quotes, and quote a flow collection's value holding `?`",
        ) from None


class _Builder:
    def __init__(self, result: ReadResult, version: str) -> None:
        self.result = result
        self.version = version
        self.done: dict[int, Any] = {}
        self.building: set[int] = set()
        # the scalar tags built as PyYAML builds them (OmegaConf refuses bytes and dates: kept as source)
        self.tags: tuple[str, ...] = ("str", "int", "float", "bool", "null")
        if version != "omegaconf":
            self.tags += ("binary", "timestamp")

    def loc(self, node: yaml.Node) -> Location:
        return Location(self.result.path, node.start_mark.line + 1, node.start_mark.column + 1)

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.result.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        if id(node) in self.done:  # an alias: the same value again
            return self.done[id(node)]
        if id(node) in self.building:
            raise ConfigError(
                "a YAML alias refers to the node that contains it",
                location=self.loc(node),
                hint="configs must be trees; remove the recursive alias",
            )
        self.building.add(id(node))
        value = self.collection(node, path)
        self.building.discard(id(node))
        self.done[id(node)] = value
        return value

    def collection(self, node: yaml.Node, path: Path) -> Any:
        """A sequence or mapping; one with another tag is kept as its YAML source, not built."""
        if isinstance(node, yaml.SequenceNode) and node.tag == _STD + "seq":
            return [self.build(child, path + (i,)) for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode) and node.tag == _STD + "map":
            return self.mapping(node, path)
        if self.version != "omegaconf" and node.tag in (_STD + "set", _STD + "omap", _STD + "pairs"):
            return self.typed_collection(node, path)
        return NotEvaluated(
            f"{node.tag} {yaml.serialize(node).strip()}", self.result.path, node.start_mark.line + 1
        )

    def typed_collection(self, node: yaml.Node, path: Path) -> Any:
        """``!!set`` (a set of its keys), ``!!omap`` and ``!!pairs`` (a list of (key, value) pairs),
        as PyYAML builds them: a set's order and the layout of the pairs are no change, a member
        or a pair's value read as a value. (OmegaConf refuses them: kept as source there.)"""
        if isinstance(node, yaml.MappingNode) and node.tag == _STD + "set":
            return {self.key(key_node) for key_node, _ in node.value}
        if not isinstance(node, yaml.SequenceNode) or not all(
            isinstance(item, yaml.MappingNode) and len(item.value) == 1 for item in node.value
        ):
            raise ConfigError(
                f"a {node.tag} must be a sequence of one-key mappings",
                location=self.loc(node),
                hint="write each pair as `- key: value`",
            )
        pairs = []
        for index, item in enumerate(node.value):
            ((key_node, value_node),) = item.value
            pairs.append((self.key(key_node), self.build(value_node, path + (index,))))
        return pairs

    def scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag == _PLAIN:
            return self.plain(node)
        if node.tag.startswith(_STD) and node.tag[len(_STD) :] in self.tags:
            try:
                return _CONSTRUCTOR.construct_object(node)
            except (yaml.YAMLError, ValueError) as err:
                raise ConfigError(f"bad {node.tag} scalar: {err}", location=self.loc(node)) from None
        return NotEvaluated(f"{node.tag} {node.value}", self.result.path, node.start_mark.line + 1)

    def plain(self, node: yaml.ScalarNode) -> Any:
        """An untagged plain scalar as this reading types it, with a warning where the readings
        disagree; an integer too long for ``int()`` as its exact digits."""
        if len(node.value) > BIG_DIGITS and big_int(node.value) is not None:
            return big_int(node.value)
        chosen, disagreement = _plain_reading(node.value, self.version)
        if chosen is REFUSED:
            raise ConfigError(
                f"PyYAML (and OmegaConf) cannot load the plain scalar {node.value!r}: YAML 1.1 "
                "gives it a type they cannot build (`=` is !!value, `<<` a merge key)",
                location=self.loc(node),
                hint=f"quote it ('{node.value}') for the string, or read the file with --yaml 1.2",
            )
        if disagreement:
            self.result.warnings.append(f"{self.loc(node)}: {node.value!r} reads as {disagreement}")
        return chosen

    def mapping(self, node: yaml.MappingNode, path: Path) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        merged: dict[Any, Any] = {}
        clashes: dict[Any, yaml.Node] = {}
        for key_node, value_node in node.value:
            if _is_merge_key(key_node):
                self.merge(value_node, path, merged, clashes, key_node)
                continue
            key = self.key(key_node)
            if key in out:
                raise ConfigError(
                    f"duplicate key {key!r} (first at line {self.result.lines.get(path + (key,), 0)})",
                    location=self.loc(key_node),
                    hint="remove one of them; PyYAML would silently keep the last, OmegaConf refuses it",
                )
            self.result.lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, path + (key,))
        _refuse_clash([k for k in clashes if k not in out], clashes, self.loc)
        for k, v in merged.items():
            out.setdefault(k, v)  # keys written in the mapping win over merged ones
        return out

    def merge(
        self,
        value_node: yaml.Node,
        path: Path,
        merged: dict[Any, Any],
        clashes: dict[Any, yaml.Node],
        at: yaml.Node,
    ) -> None:
        """``<<: *a`` / ``<<: [*a, *b]``: the keys of each mapping named. Where two of them give
        one key other values, which one wins is PyYAML's version's choice (6.0.3 keeps the first
        of a list and the last ``<<``; 6.0.4 the last, or the first for a one-letter key): noted in
        ``clashes``, an error unless the mapping writes the key itself."""
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in sources:
            data = self.build(source, path)
            if not isinstance(data, dict):
                raise ConfigError(
                    "a merge key (`<<`) must name a mapping or a list of mappings",
                    location=self.loc(source),
                    hint="write `<<: *anchor` where the anchor is a mapping",
                )
            for k, v in data.items():
                if k in merged and not strictly_equal(merged[k], v):
                    clashes.setdefault(k, at)  # the `<<` that brings the second value
                merged.setdefault(k, v)

    def key(self, key_node: yaml.Node) -> Any:
        """A mapping key: a scalar, typed; a tagged one the reader does not build is its text."""
        if not isinstance(key_node, yaml.ScalarNode):
            raise ConfigError("a mapping key must be a scalar", location=self.loc(key_node))
        if key_node.tag == _PLAIN and key_node.value == "=" and self.version != "1.2":
            return "="  # PyYAML's flatten_mapping makes a `=` key (1.1's !!value) a string
        key = self.scalar(key_node)
        return key.source if isinstance(key, NotEvaluated) else key


def _refuse_clash(
    keys: list[Any], clashes: dict[Any, yaml.Node], loc: Callable[[yaml.Node], Location]
) -> None:
    if keys:
        raise ConfigError(
            f"two merged mappings (`<<`) give {keys[0]!r} other values, and which one wins depends on "
            "the PyYAML version that loads the file (6.0.3 and 6.0.4 disagree)",
            location=loc(clashes[keys[0]]),
            hint=f"write `{keys[0]}:` in this mapping itself, or merge mappings that do not share it",
        )


def _is_merge_key(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag in (_PLAIN, _STD + "merge") and node.value == "<<"


# A config repeats its scalars (true, 1, 0.0, names): each text is typed once per reading. Every
# value a plain scalar types to is immutable, so sharing one between nodes is safe.
@functools.lru_cache(maxsize=4096)
def _plain_reading(text: str, version: str) -> tuple[Any, str]:
    """The value ``text`` reads as under ``version``, and, where the readings disagree, the
    warning's text after "reads as" (else "")."""
    readings = {"1.1": _built(_implicit_11, text), "1.2": _implicit_12(text)}
    if version == "omegaconf":
        readings = {"omegaconf": _built(plain_scalar_omegaconf, text), **readings}
    chosen = readings[version]
    others = [(name, v) for name, v in readings.items() if not _same(v, chosen)]
    return chosen, _disagreement(readings, version, others) if others else ""


def _disagreement(readings: dict[str, Any], version: str, others: list[tuple[str, Any]]) -> str:
    """The warning's text: the chosen reading and each that differs from it, in reading order."""
    shown = [(n, v) for n, v in readings.items() if n == version or (n, v) in others]
    return (
        ", ".join(f"{v!r} in {_reading(n)}" for n, v in shown)
        + f" (read as {_reading(version)}; --yaml selects)"
    )


def _reading(version: str) -> str:
    return "OmegaConf" if version == "omegaconf" else f"YAML {version}"


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _hydra_defaults(data: Any) -> Any:
    """A Hydra ``defaults:`` list as group -> option (``_by_group``), so that an entry inserted or
    changed is that change alone; the order, which decides who overrides whom, is compared apart.

    Only a list whose every entry is a config name or a one-key ``group: option`` mapping is read
    so, and only when some entry is a ``group: option`` mapping.
    """
    if not isinstance(data, dict) or not isinstance(data.get("defaults"), list):
        return data
    if not _hydra_shaped(data["defaults"]):
        return data
    out = _by_group(data["defaults"])
    return data if out is None else {**data, "defaults": out}


def _hydra_shaped(entries: list[Any]) -> bool:
    """Every entry a config name or a one-key mapping, and some entry a mapping (a plain list of
    names is not recognisably Hydra's: it is kept as written)."""
    if not all(isinstance(e, str) or (isinstance(e, dict) and len(e) == 1) for e in entries):
        return False
    return any(isinstance(e, dict) for e in entries)


def _by_group(entries: list[Any]) -> dict[Any, Any] | None:
    """group -> option, a plain config name -> ``config``, ``_self_`` -> ``own keys`` (where it
    is not listed, Hydra places the config's own keys last: so it is, here), in the list's order,
    which a diff of two lists compares apart (``@order``: an entry inserted is that entry alone);
    None when a key comes twice (Hydra refuses it: kept as written)."""
    out: dict[Any, Any] = {}
    for entry in entries:
        key, option = (entry, "config") if isinstance(entry, str) else next(iter(entry.items()))
        if key in out:
            return None
        out[key] = "own keys" if key == "_self_" else option
    out.setdefault("_self_", "own keys")
    return out
