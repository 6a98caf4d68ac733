"""A Hydra override's value as hydra-core 1.3 reads it (hydra/grammar/OverrideLexer.g4 and
OverrideParser.g4), nested lists and dicts included.

Hydra does not read an override's value as YAML: ``0x10``, ``010`` and ``.inf`` are strings to it,
``1_000``, ``inf`` and ``nan`` numbers, ``"a\\tb"`` keeps its backslash, and ``a=1,2`` is a sweep
over two values (multirun runs one job each), never the list ``[1,2]`` nor the string ``'1,2'``.
Inside ``[...]`` and ``{...}`` every item is typed by the same rules, so ``a=[0x10]`` is
``["0x10"]``, not ``[16]``. A value Hydra refuses, or one that calls a function (``choice(1,2)``,
``range(3)``, ``int(x)``), raises ``Refused``: the caller keeps it as source.
tests/readers/test_hydra_override_values.py holds this module to hydra-core's own parser.
"""

from __future__ import annotations

import re
from typing import Any

_MAX_DEPTH = 100  # nesting past this is kept as source rather than read recursively


class Sweep(list):  # type: ignore[type-arg]
    """``a=1,2``: Hydra's simple choice sweep (one job per item), a list of its own kind, so it is
    never equal to the list ``[1,2]``."""

    def __repr__(self) -> str:
        return ",".join(repr(item) for item in self)  # as written on the command line, not `[...]`


class Refused(Exception):
    """A value Hydra's grammar refuses, or one it would compute (a function call)."""


_WS = r"[ \t]*"
_INT_UNSIGNED = r"(?:0|[1-9](?:_?[0-9])*)"
_DIGITS = r"[0-9](?:_?[0-9])*"
# each alternative's longest spelling first: Python's `re` takes the first alternative that
# matches, ANTLR's lexer the longest
_POINT_FLOAT = rf"(?:{_INT_UNSIGNED}?\.{_DIGITS}|{_INT_UNSIGNED}\.)"
_EXPONENT_FLOAT = rf"(?:{_POINT_FLOAT}|{_INT_UNSIGNED})[eE][+-]?{_DIGITS}"
# VALUE_MODE's rules in the lexer's order: the longest match wins, a tie goes to the earlier rule
_RULES: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(pattern))
    for name, pattern in [
        ("POPEN", rf"{_WS}\({_WS}"),
        ("COMMA", rf"{_WS},{_WS}"),
        ("PCLOSE", rf"{_WS}\)"),
        ("BRACKET_OPEN", rf"\[{_WS}"),
        ("BRACKET_CLOSE", rf"{_WS}\]"),
        ("BRACE_OPEN", rf"\{{{_WS}"),
        ("BRACE_CLOSE", rf"{_WS}\}}"),
        ("COLON", rf"{_WS}:{_WS}"),
        ("EQUAL", rf"{_WS}={_WS}"),
        ("FLOAT", rf"[+-]?(?:{_EXPONENT_FLOAT}|{_POINT_FLOAT}|[Ii][Nn][Ff]|[Nn][Aa][Nn])"),
        ("INT", rf"[+-]?{_INT_UNSIGNED}"),
        ("BOOL", r"[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]"),
        ("NULL", r"[Nn][Uu][Ll][Ll]"),
        ("UNQUOTED_CHAR", r"[/\-\\+.$%*@?|]"),
        ("ID", r"[a-zA-Z_][a-zA-Z0-9_\-]*"),
        ("ESC", r"(?:\\[\\()\[\]{}:=, \t])+"),
        ("WS", r"[ \t]+"),
        ("INTERPOLATION", r"\$\{[^}]+\}"),
    ]
]
_PRIMITIVE = {"ID", "NULL", "INT", "FLOAT", "BOOL", "INTERPOLATION", "UNQUOTED_CHAR", "COLON", "ESC", "WS"}
_DICT_KEY = _PRIMITIVE - {"COLON", "INTERPOLATION"}

Token = tuple[str, str]


# a value of characters every rule above takes one by one into a primitive (no blank, quote,
# bracket, comma, colon or escape): most overrides, read without the lexer
_PLAIN = re.compile(r"[A-Za-z0-9_\-/+.$%*@?|]+")
_WHOLE = {name: pattern for name, pattern in _RULES if name in ("FLOAT", "INT", "BOOL", "NULL")}


def _plain(text: str) -> Any:
    """A plain value: typed when one number, bool or null token spans it all (those full matches
    are disjoint, and each wins over an ID of the same length), else its text."""
    for kind, pattern in _WHOLE.items():
        if pattern.fullmatch(text):
            return _one(kind, text)
    return text


def _quoted_end(text: str, start: int) -> int:
    """The end of the quoted value opening at ``start``: the first same quote after it that is
    preceded by an even number of backslashes (QUOTED_VALUE)."""
    quote = text[start]
    i = start + 1
    while True:
        i = text.find(quote, i)
        if i < 0:
            raise Refused
        run = i
        while run > start + 1 and text[run - 1] == "\\":
            run -= 1
        if (i - run) % 2 == 0:
            return i + 1
        i += 1


def tokens(text: str) -> list[Token]:
    """``text`` split as Hydra's lexer splits a value; Refused at a character no rule takes."""
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        kind, end = _next_token(text, pos)
        out.append((kind, text[pos:end]))
        pos = end
    return out


def _next_token(text: str, pos: int) -> tuple[str, int]:
    """The kind and end of the token at ``pos``: the longest match, a tie to the earlier rule."""
    if text[pos] in "'\"":
        return "QUOTED", _quoted_end(text, pos)
    matches = [(pattern.match(text, pos), -rank, name) for rank, (name, pattern) in enumerate(_RULES)]
    found = [(m.end(), rank, name) for m, rank, name in matches if m is not None and m.end() > pos]
    if not found:
        raise Refused
    end, _, kind = max(found)
    return kind, end


def read_value(text: str) -> Any:
    """The value of an override ``key=text`` as Hydra reads it; a ``Sweep`` for ``a,b``."""
    if _PLAIN.fullmatch(text):
        return _plain(text)
    parser = _Parser(tokens(text.lstrip(" \t")))  # `=` takes the blanks after it
    if not parser.tokens:
        return ""
    first = parser.element(0)
    items = [first]
    while parser.peek() == "COMMA":
        parser.pos += 1
        items.append(parser.element(0))
    if parser.peek() is not None:
        raise Refused
    return Sweep(items) if len(items) > 1 else first


class _Parser:
    def __init__(self, found: list[Token]) -> None:
        self.tokens = found
        self.pos = 0

    def peek(self, ahead: int = 0) -> str | None:
        at = self.pos + ahead
        return self.tokens[at][0] if at < len(self.tokens) else None

    def expect(self, kind: str) -> None:
        if self.peek() != kind:
            raise Refused
        self.pos += 1

    def element(self, depth: int) -> Any:
        kind = self.peek()
        if depth > _MAX_DEPTH:
            raise Refused
        if kind == "ID" and self.peek(1) == "POPEN":
            raise Refused  # a function: Hydra computes it (choice, range, casts...)
        if kind == "BRACKET_OPEN":
            return self.listing(depth)
        if kind == "BRACE_OPEN":
            return self.mapping(depth)
        if kind == "QUOTED":
            self.pos += 1
            return _unquoted(self.tokens[self.pos - 1][1])
        return self.primitive(_PRIMITIVE)

    def primitive(self, allowed: set[str]) -> Any:
        start = self.pos
        while self.peek() in allowed:
            self.pos += 1
        if self.pos == start:
            raise Refused
        return _typed(self.tokens[start : self.pos])

    def listing(self, depth: int) -> list[Any]:
        self.expect("BRACKET_OPEN")
        items: list[Any] = []
        if self.peek() != "BRACKET_CLOSE":
            items.append(self.element(depth + 1))
            while self.peek() == "COMMA":
                self.pos += 1
                items.append(self.element(depth + 1))
        self.expect("BRACKET_CLOSE")
        return items

    def mapping(self, depth: int) -> dict[Any, Any]:
        self.expect("BRACE_OPEN")
        out: dict[Any, Any] = {}
        if self.peek() != "BRACE_CLOSE":
            self.pair(out, depth)
            while self.peek() == "COMMA":
                self.pos += 1
                self.pair(out, depth)
        self.expect("BRACE_CLOSE")
        return out

    def pair(self, out: dict[Any, Any], depth: int) -> None:
        key = self.primitive(_DICT_KEY)
        self.expect("COLON")
        value = self.element(depth + 1)
        out.pop(key, None)  # Python's dict(): a later key wins, and the key keeps its new place
        out[key] = value


def _typed(found: list[Token]) -> Any:
    """A primitive's tokens as Hydra types them: one token (blanks around it dropped) by its kind,
    several as their text joined, escapes undone."""
    first, last = 0, len(found)
    if found[0][0] == "WS":
        if last == 1:
            raise Refused  # a primitive of blanks only
        first = 1
    if found[-1][0] == "WS":
        last -= 1
    if last - first > 1:
        return "".join(text[1::2] if kind == "ESC" else text for kind, text in found[first:last])
    kind, text = found[first]
    try:
        return _one(kind, text)
    except ValueError:
        raise Refused from None  # an integer past Python's digit limit: Hydra fails on it


# how each kind of single-token primitive is typed; any other kind is its text
_CONVERT: dict[str, Any] = {
    "INT": int,
    "FLOAT": float,
    "NULL": lambda text: None,
    "BOOL": lambda text: text.lower() == "true",
    "ESC": lambda text: text[1::2],
}


def _one(kind: str, text: str) -> Any:
    return _CONVERT.get(kind, str)(text)


def _unquoted(text: str) -> str:
    """A quoted value's text: only a backslash run before a quote is an escape (halved, the quote
    kept when the run is odd); ``\\t`` and every other backslash stay as written."""
    quote, body = text[0], text[1:]
    pattern = re.compile(r"(\\)+" + quote)
    parts: list[str] = []
    found = pattern.search(body)
    while found is not None:
        start, stop = found.span()
        parts.append(body[:start])
        parts.append(body[start + 1 : stop : 2])
        body = body[stop:]
        found = pattern.search(body)
    if len(body) > 1:
        parts.append(body[:-1])
    return "".join(parts)
