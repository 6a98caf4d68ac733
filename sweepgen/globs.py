"""The one glob grammar for allowed paths (the spec's ``allow:`` and ``diff --allow``), matched in
linear time.

Grammar: segments joined by ``.``; a bare segment may use ``*`` (any run of characters within one
key) and ``?`` (one character); a segment that is exactly ``**`` matches any number of segments,
none included; ``[N]`` is list index N, ``[*]`` any index, ``["a.b"]`` a key taken literally
(dots, spaces and wildcards included). A bare ``*`` segment matches any key or index.

Matching never backtracks exponentially, whatever the input: ``**`` is simulated as a set of
positions in the pattern (a Thompson NFA, O(path length x segments)) and ``*`` inside a key by the
greedy two-pointer method (O(key length x pattern length)). A regex translation of the same globs
hangs for minutes on ``a*a*a*...b`` against a long key.

API: ``compile_glob(pattern) -> Glob`` (cached; raises ``GlobError`` with ``.why``),
``Glob.match(path_tokens)``, ``dotted(path)`` to split a dotted path, and ``SYNTAX_HINT`` for error
messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

Token = str | int  # a mapping key or a list index
SYNTAX_HINT = (
    "write dotted keys with [N] for list indices, * within a key, ** for any depth, "
    'e.g. debate_streamer.reward_shaping_params.** or pipeline[*].type or env["a.b"]'
)
MAX_PATTERN = 4096  # characters; an allow-list entry is a path, not a document

_BARE_GLOB = re.compile(r"[^.\[\]\"'\s]+")
_INDEX = re.compile(r"-?\d+")


class GlobError(ValueError):
    """A pattern outside the grammar; ``why`` says what is wrong with it."""

    def __init__(self, pattern: str, why: str) -> None:
        super().__init__(f"invalid glob {pattern!r}: {why}")
        self.pattern = pattern
        self.why = why


class Literal(str):
    """A key written in quotes: matched exactly, no wildcards."""


class _AnyDepth:
    """The ``**`` segment."""

    def __repr__(self) -> str:
        return "**"


ANY_DEPTH = _AnyDepth()
Segment = str | int | Literal | _AnyDepth


@dataclass(frozen=True)
class Glob:
    pattern: str
    segments: tuple[Segment, ...]

    def match(self, path: Sequence[Token]) -> bool:
        """Does the whole ``path`` match? Linear in ``len(path)`` for a given pattern."""
        segs = self.segments
        n = len(segs)
        states = _closure({0}, segs)
        for token in path:
            nxt = _advance(segs, states, token)
            if not nxt:
                return False
            states = _closure(nxt, segs)
        return n in states


def _advance(segs: tuple[Segment, ...], states: set[int], token: Token) -> set[int]:
    """The positions reached from ``states`` by one path token."""
    nxt: set[int] = set()
    for i in states:
        if i == len(segs):
            continue
        seg = segs[i]
        if seg is ANY_DEPTH:
            nxt.add(i)  # ** swallows this token and stays
        elif _segment_matches(seg, token):
            nxt.add(i + 1)
    return nxt


def _closure(states: set[int], segs: tuple[Segment, ...]) -> set[int]:
    """Add the positions reachable by letting each ``**`` match zero segments."""
    out = set(states)
    todo = list(states)
    while todo:
        i = todo.pop()
        if i < len(segs) and segs[i] is ANY_DEPTH and i + 1 not in out:
            out.add(i + 1)
            todo.append(i + 1)
    return out


def _segment_matches(seg: Segment, token: Token) -> bool:
    if isinstance(seg, Literal):
        return isinstance(token, str) and token == str(seg)
    if isinstance(seg, int):
        return type(token) is int and token == seg
    if seg == "*":
        return True
    return isinstance(token, str) and _wildcard_match(str(seg), token)


def _wildcard_match(pattern: str, text: str) -> bool:
    """``*`` and ``?`` over characters, greedy with one resume point: never exponential."""
    p = t = 0
    star = -1  # position in pattern after the last *
    resume = 0  # position in text where that * currently ends
    while t < len(text):
        if p < len(pattern) and pattern[p] == "*":
            star, resume = p + 1, t
            p += 1
        elif p < len(pattern) and pattern[p] in ("?", text[t]):
            p += 1
            t += 1
        elif star >= 0:
            resume += 1
            p, t = star, resume
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


@lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> Glob:
    """Parse ``pattern``; ``GlobError`` when it is outside the grammar."""
    if len(pattern) > MAX_PATTERN:
        raise GlobError(pattern[:40] + "...", f"longer than {MAX_PATTERN} characters")
    segments: list[Segment] = []
    rest = pattern
    while rest:
        segment, rest = _first_segment(rest, pattern)
        segments.append(segment)
        rest = _past_separator(rest, pattern)
    if not segments:
        raise GlobError(pattern, "empty pattern")
    return Glob(pattern, tuple(segments))


def _first_segment(rest: str, pattern: str) -> tuple[Segment, str]:
    """The segment ``rest`` starts with (bracketed or bare), and what follows it."""
    if rest.startswith("["):
        end = _closing_bracket(rest, pattern)
        return _bracket_segment(rest[1:end], pattern), rest[end + 1 :]
    found = _BARE_GLOB.match(rest)
    if not found:
        raise GlobError(pattern, f"unexpected {rest[0]!r}")
    text = found.group()
    return ANY_DEPTH if text == "**" else text, rest[found.end() :]


def _past_separator(rest: str, pattern: str) -> str:
    """What follows a segment, past its ``.``: the next segment, a bracket, or nothing."""
    if rest.startswith("."):
        rest = rest[1:]
        if not rest or rest.startswith((".", "[")):
            raise GlobError(pattern, "empty segment")
    elif rest and not rest.startswith("["):
        raise GlobError(pattern, f"unexpected {rest[0]!r}")
    return rest


def _closing_bracket(rest: str, pattern: str) -> int:
    if rest.startswith('["'):
        i = 2  # find the end of the JSON string, honouring escapes
        while i < len(rest) and rest[i] != '"':
            i += 2 if rest[i] == "\\" else 1
        end = rest.find("]", i)
    else:
        end = rest.find("]")
    if end < 0:
        raise GlobError(pattern, "unclosed '['")
    return end


def _bracket_segment(inner: str, pattern: str) -> Segment:
    if inner == "*":
        return "*"
    if _INDEX.fullmatch(inner):
        return int(inner)
    try:
        key = json.loads(inner)
    except ValueError:
        key = None
    if not isinstance(key, str):
        raise GlobError(pattern, f"bracket segment [{inner}] is neither an index, * nor a quoted key")
    return Literal(key)


def dotted(path: str) -> tuple[str, ...]:
    """``"a.b.c"`` as path tokens (config keys never contain dots)."""
    return tuple(path.split("."))
