"""YAML as OmegaConf reads it (Hydra, NeMo, NeMo-RL, torchtune configs): scalars and interpolations.

OmegaConf loads YAML through PyYAML's 1.1 rules with two changes: ``1e-5`` is a float (YAML 1.1
wants a dot: ``1.0e-5``) and dates stay strings. With omegaconf installed (the ``diff`` extra) its
own loader types each scalar; without it, the same two rules are applied here (tests hold the two
together). Interpolations are resolved as OmegaConf resolves node references: ``${a.b}`` and
relative ``${.b}`` / ``${..b}`` take the referenced value (a whole-string interpolation keeps its
type, one inside a string is text). Resolver calls (``${oc.env:HOME}``, ``${now:}``, any custom
resolver), references that do not resolve, and cycles are never evaluated: they stay
not-evaluated nodes compared by their source.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from sweepgen.readers.model import NotEvaluated

_FLOAT = re.compile(
    r"""^(?:
     [-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
    |\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_RESOLVER: Any = None


def _resolver() -> Any:
    """omegaconf's own YAML loader when installed, else PyYAML's with OmegaConf's two changes."""
    global _RESOLVER
    if _RESOLVER is None:
        try:
            from omegaconf._utils import get_yaml_loader  # noqa: PLC0415 - the optional `diff` extra, loaded on first use
        except ImportError:
            _RESOLVER = _builtin_resolver()
        else:
            _RESOLVER = get_yaml_loader()("")
    return _RESOLVER


def _builtin_resolver() -> Any:
    class _Rules(yaml.resolver.Resolver):
        pass

    _Rules.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
    _Rules.yaml_implicit_resolvers = {
        key: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
        for key, resolvers in _Rules.yaml_implicit_resolvers.items()
    }
    return _Rules()


def plain_scalar_omegaconf(text: str) -> Any:
    """OmegaConf's reading of an untagged plain scalar."""
    tag = _resolver().resolve(yaml.ScalarNode, text, (True, False))
    return _CONSTRUCTOR.construct_object(yaml.ScalarNode(tag, text))


def uses_omegaconf(text: str) -> bool:
    """Does a YAML text use OmegaConf's features (an interpolation, or a top-level ``defaults:``)?"""
    return "${" in text or re.search(r"^defaults[ \t]*:", text, re.M) is not None


# interpolations ----------------------------------------------------------------------------------

# a node reference, or `oc.select` (a reference with a default); another `:` means a resolver call
_REFERENCE = re.compile(r"\$\{((?:oc\.select:)?[^${}:]*)\}")
_SELECT = "oc.select:"
_BRACKET = re.compile(r"\[([\w-]+)\]")
_MISSING = "???"  # OmegaConf's mandatory value not given: `oc.select` takes its default
_BACKSLASHED = re.compile(r"(\\+)\$\{")  # backslashes right before an interpolation escape it or themselves
_LITERAL = "\x00"  # marks an escaped `${` while the references beside it resolve (NUL text: kept)
_MAX_DEPTH = 32
# A file's interpolations may name each other twice a level (`a: ${b}${b}`, `b: ${c}${c}`...): 2^depth
# steps and strings. Each node is resolved once (remembered by its path), and a string past
# _MAX_CHARS is kept as its source, as the Python reader keeps what is past its bounds
# (sweepgen.readers.python.pybounds); _MAX_STEPS is the backstop for what memory cannot hold.
_MAX_STEPS = 1_000_000  # interpolations resolved per file
_MAX_CHARS = 1_000_000  # characters of one string built from references


def resolve_interpolations(data: Any, where: str) -> Any:
    """``data`` with every node interpolation replaced by what it references; the rest untouched."""
    return _Resolver(data, where).walk(data, ())


class _Resolver:
    def __init__(self, root: Any, where: str) -> None:
        self.root = root
        self.where = where
        self.active: set[tuple[Any, ...]] = set()
        self.steps = 0
        self.resolved: dict[tuple[Any, ...], Any] = {}  # path -> its value, when no cycle was met
        self.cut = 0  # references cut short (a cycle, too deep): what met one is not remembered

    def walk(self, value: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(value, dict):
            return {k: self.walk(v, (*path, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.walk(v, (*path, i)) for i, v in enumerate(value)]
        if isinstance(value, str) and "${" in value:
            return self.interpolate(value, path)
        return value

    def interpolate(self, text: str, path: tuple[Any, ...]) -> Any:
        if path in self.resolved:
            return self.resolved[path]
        kept = NotEvaluated(text, self.where)
        self.steps += 1
        if path in self.active or len(self.active) > _MAX_DEPTH or self.steps > _MAX_STEPS:
            self.cut += 1
            return kept  # a cycle (OmegaConf refuses it) or past the bounds: it stays source
        cut = self.cut
        value = self.resolve(text, path, kept)
        if self.cut == cut:
            self.resolved[path] = value
        return value

    def resolve(self, text: str, path: tuple[Any, ...], kept: NotEvaluated) -> Any:
        self.active.add(path)
        try:
            if _BACKSLASHED.search(text):
                return self.escaped(text, path, kept)
            if "${" in _REFERENCE.sub("", text) or self.unselected(text, path):
                # a resolver call or a nested interpolation is never evaluated; the node references
                # beside it are, so the kept source is the definition's, not a name for it
                spelled = _REFERENCE.sub(lambda m: self.spelled(m, path), text)
                return NotEvaluated(_tight(spelled), self.where)
            whole = _REFERENCE.fullmatch(text)
            if whole:
                found = self.target(whole.group(1), path)
                return kept if found is None else found[0]
            joined = self.joined(text, path)
            return kept if joined is None else joined
        finally:
            self.active.discard(path)

    def escaped(self, text: str, path: tuple[Any, ...], kept: NotEvaluated) -> Any:
        """A string with backslashes right before a ``${``, as OmegaConf reads it: an odd run keeps
        half of them and a literal ``${`` (``\\${a}`` is the text ``${a}``), an even run half of
        them and the interpolation; other backslashes stay as written. Beside a resolver call it
        stays as written."""
        if _LITERAL in text:
            return kept
        marked = _BACKSLASHED.sub(_unescaped, text)
        if "${" in _REFERENCE.sub("", marked):
            return kept
        joined = self.joined(marked, path)
        return kept if joined is None else joined.replace(_LITERAL, "${")

    def joined(self, text: str, path: tuple[Any, ...]) -> str | None:
        """A string with references inside it, each replaced by its value's text; None when one
        names nothing or something that is no scalar."""
        pieces: list[str] = []
        last = size = 0
        for match in _REFERENCE.finditer(text):
            piece = self.text_of(match.group(1), path)
            if piece is None:
                return None
            pieces.append(text[last : match.start()] + piece)
            last = match.end()
            size += len(pieces[-1])
            if size > _MAX_CHARS:
                return None
        return "".join(pieces) + text[last:]

    def spelled(self, match: re.Match[str], path: tuple[Any, ...]) -> str:
        piece = self.text_of(match.group(1), path)
        return match.group(0) if piece is None else piece

    def text_of(self, reference: str, path: tuple[Any, ...]) -> str | None:
        """How the value a reference names reads inside a string; None for nothing or a non-scalar."""
        found = self.target(reference, path)
        if found is None or isinstance(found[0], (dict, list, NotEvaluated)):
            return None
        return _as_text(found[0])

    def unselected(self, text: str, path: tuple[Any, ...]) -> bool:
        """Does ``text`` hold an ``oc.select`` that cannot be evaluated (kept as a resolver call)?"""
        return any(
            m.group(1).startswith(_SELECT) and self.target(m.group(1), path) is None
            for m in _REFERENCE.finditer(text)
        )

    def selected(self, arguments: str, path: tuple[Any, ...]) -> tuple[Any] | None:
        """``${oc.select:KEY}`` / ``${oc.select:KEY,DEFAULT}``: KEY's value where it names one that
        is not ``???``, else None without a default; a default is not evaluated (OmegaConf's grammar
        types it), nor is a quoted key."""
        key, comma, _ = arguments.partition(",")
        found = self.descend(key, path) if _plain_key(key) else None
        if found is None or found[0] == "unknown":
            return None
        if found[0] == "found" and found[1] != _MISSING:
            return (found[1],)
        return None if comma else (None,)  # names nothing (or `???`): the default, else null

    def target(self, reference: str, path: tuple[Any, ...]) -> tuple[Any] | None:
        """The value ``${reference}`` names from ``path``, resolved in turn; None when it names nothing."""
        if reference.startswith(_SELECT):
            return self.selected(reference[len(_SELECT) :], path)
        found = self.descend(reference, path)
        return (found[1],) if found is not None and found[0] == "found" else None

    def descend(self, reference: str, path: tuple[Any, ...]) -> tuple[str, Any] | None:
        """("found", the value a reference names, resolved), ("missing", None) where it surely
        names nothing, ("unknown", None) where a node on the way stays not evaluated; None for a
        reference that is not one. A node on the way that is an interpolation is resolved first
        (``c: ${a}`` makes ``c.x`` a's ``x``)."""
        keys = _reference_keys(reference.strip(), path)
        if keys is None:
            return None
        node: Any = self.root
        full: list[Any] = []
        for key in keys:
            node = self.walk(node, tuple(full)) if isinstance(node, str) else node
            step = _step(node, key)
            if step is None:
                return ("unknown" if isinstance(node, NotEvaluated) else "missing", None)
            key, node = step
            full.append(key)
        return ("found", self.walk(node, tuple(full)))


_RESOLVER_HEAD = re.compile(r"\$\{\s*([\w.-]+)\s*:[ \t]*")
_AROUND = {",", "[", "]", "{", "}"}  # OmegaConf's grammar drops the blanks beside these
# a quoted argument, an escaped character (`\,` is a comma inside an argument), `${`, a blank run
_TOKEN = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\\.|\$\{|[ \t]+|.""", re.S)


def _tight(text: str) -> str:
    """A resolver call's source without the blanks OmegaConf's grammar drops: around the resolver's
    name, after its `:`, beside an argument's `,` and a list's or dict's brackets (``${oc.env:A, 1}``
    is ``${oc.env:A,1}``); blanks inside an argument (``a b``), in quotes, after an escaped ``\\,``
    and outside ``${...}`` are the value's own and stay."""
    tokens = _TOKEN.findall(_RESOLVER_HEAD.sub(r"${\1:", text))
    out: list[str] = []
    depth = 0
    for index, token in enumerate(tokens):
        if token == "${" or (token == "{" and depth):
            depth += 1  # a dict argument's braces nest as the call's do
        elif token == "}" and depth:
            depth -= 1
        elif depth and _dropped(token, out, tokens, index):
            continue
        out.append(token)
    return "".join(out)


def _dropped(token: str, out: list[str], tokens: list[str], index: int) -> bool:
    """A blank run beside a separator, before it or after it."""
    beside = {out[-1] if out else "", tokens[index + 1] if index + 1 < len(tokens) else ""}
    return token[0] in " \t" and bool(_AROUND & beside)


def _unescaped(found: re.Match[str]) -> str:
    """A run of backslashes before ``${``: half of them, then the literal ``${`` (marked) or the
    interpolation."""
    count = len(found.group(1))
    return "\\" * (count // 2) + (_LITERAL if count % 2 else "${")


def _plain_key(key: str) -> bool:
    """An ``oc.select`` key this reader reads: not empty, not quoted (OmegaConf's grammar)."""
    return bool(key.strip()) and not any(q in key for q in "'\"")


def _dotted(reference: str) -> str:
    """A reference with its brackets as dots (``l[1].c``, ``a[b]`` are ``l.1.c``, ``a.b``); empty
    for one this reader does not read (a bracket first, or left over)."""
    if reference.lstrip(".").startswith("["):
        return ""
    reference = _BRACKET.sub(r".\1", reference)
    return "" if "[" in reference or "]" in reference else reference


def _reference_keys(reference: str, path: tuple[Any, ...]) -> list[Any] | None:
    """The keys from the root a reference names: ``a.b`` (or ``a[b]``) from the root, ``..b`` from
    the node that holds it (a dot per level up); None for an empty one or one that climbs above
    the root."""
    reference = _dotted(reference)
    if not reference:
        return None
    if not reference.startswith("."):
        return reference.split(".")
    dots = len(reference) - len(reference.lstrip("."))
    if len(path) - dots < 0:
        return None
    return [*path[: len(path) - dots], *(s for s in reference[dots:].split(".") if s)]


def _step(node: Any, key: Any) -> tuple[Any, Any] | None:
    """(key, child) one level down: a mapping's key, or a list's index (a digit string in a
    reference, an int on the path); None when there is no such child."""
    if isinstance(node, dict):
        return (key, node[key]) if key in node else None
    if not isinstance(node, list):
        return None
    index = int(key) if isinstance(key, str) and key.isdigit() else key
    return (index, node[index]) if isinstance(index, int) and index < len(node) else None


def _as_text(value: Any) -> str:
    """How OmegaConf writes a value inside a string interpolation."""
    if value is None:
        return "None"
    return str(value)
