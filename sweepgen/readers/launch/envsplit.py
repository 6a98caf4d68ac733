"""``env -S STRING``: the words GNU env splits STRING into, by its own rules (coreutils ``env.c``,
``build_argv``; held to the installed env in ``tests/readers/test_getopt_wrappers.py``).

Blanks outside quotes end a word; ``'...'`` keeps everything but ``\\\\`` and ``\\'``; ``"..."``
reads backslash escapes and ``${NAME}``; ``""`` is an empty word; a ``#`` that starts a word ends
the string (a comment). Escapes outside single quotes: ``\\"``, ``\\#``, ``\\$``, ``\\'`` and
``\\\\`` are the character, ``\\f \\n \\r \\t \\v`` the control character, ``\\_`` a blank inside
double quotes and a word break outside them, ``\\c`` ends the string (outside double quotes); any
other is refused by env, and so is a ``$`` not followed by ``{NAME}``. ``${NAME}`` takes its value
from env's environment, which a diff does not know: a word holding one is returned as not known
(its text as written, ``known`` False). None where env refuses the string (it runs nothing).
"""

from __future__ import annotations

import re

_BLANKS = " \t\n\v\f\r"
_CONTROL = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_NAME = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


class _Refused(Exception):
    """What env refuses (an unknown escape, a ``$`` without braces, an unterminated quote)."""


class _Words:
    """The words made so far, the one being made, and whether it holds a ``${NAME}``."""

    def __init__(self) -> None:
        self.done: list[tuple[str, bool]] = []
        self.current: list[str] | None = None  # None: between words
        self.unknown = False

    def add(self, text: str) -> None:
        self.current = [*(self.current or []), text]

    def end(self) -> None:
        if self.current is not None:
            self.done.append(("".join(self.current), not self.unknown))
        self.current, self.unknown = None, False


def split(string: str) -> list[tuple[str, bool]] | None:
    """The words ``env -S string`` makes, each with whether it is known; None where env refuses."""
    words = _Words()
    try:
        _read(string, words)
    except _Refused:
        return None
    words.end()
    return words.done


def _read(string: str, words: _Words) -> None:
    i, quote = 0, ""
    while i < len(string):
        char = string[i]
        if quote == "'":
            i, quote = _single(string, i, words)
        elif char == "\\":
            if string[i + 1 : i + 2] == "c" and quote != '"':
                return  # `\c`: the rest is not read
            i = _escape(string, i, quote, words)
        elif char == "$":
            i = _expansion(string, i, words)
        elif char in "'\"" and quote in ("", char):
            quote = "" if quote else char
            words.add("")  # `""` is an empty word
            i += 1
        elif char in _BLANKS and not quote:
            words.end()
            i += 1
        elif char == "#" and not quote and words.current is None:
            return  # a comment
        else:
            words.add(char)
            i += 1
    if quote:
        raise _Refused(quote)


def _single(string: str, i: int, words: _Words) -> tuple[int, str]:
    """One character inside single quotes; the index after it and the quote still open."""
    char = string[i]
    if char == "'":
        return i + 1, ""
    if char == "\\" and string[i + 1 : i + 2] in ("\\", "'"):
        words.add(string[i + 1])
        return i + 2, "'"
    words.add(char)
    return i + 1, "'"


def _escape(string: str, i: int, quote: str, words: _Words) -> int:
    """A backslash escape outside single quotes; the index after it."""
    code = string[i + 1 : i + 2]
    if code in ('"', "#", "$", "'", "\\"):
        words.add(code)
    elif code in _CONTROL:
        words.add(_CONTROL[code])
    elif code == "_" and quote:
        words.add(" ")
    elif code == "_":
        words.end()
    else:
        raise _Refused(code)
    return i + 2


def _expansion(string: str, i: int, words: _Words) -> int:
    """``${NAME}``: a value this reading does not know; the index after it."""
    found = _NAME.match(string, i + 1)
    if found is None:
        raise _Refused("$")
    words.add(string[i : found.end()])
    words.unknown = True
    return found.end()
