"""What a shell variable holds while a script is read: known text, text that still holds source the
reader could not expand (``Partial``), an array of either, or nothing knowable (``UNKNOWN``)."""

from __future__ import annotations

import re
from collections.abc import Callable

Value = str | list[str]


class Partial(str):
    """Text that still holds source the reader could not expand (``$1/run_a``): a variable's value
    as far as it is known. Substituted where the variable is used, so a not-evaluated word carries
    the source of its definition, never only the name that refers to it."""

    __slots__ = ()


def partial(value: Value) -> bool:
    """Does ``value`` (a word or an array) hold any text that was not expanded?"""
    return isinstance(value, Partial) or (
        isinstance(value, list) and any(isinstance(v, Partial) for v in value)
    )


def joined(value: Value) -> str:
    """An array joined with blanks (``"${A[*]}"``, an array read in an assignment); partial stays partial."""
    if not isinstance(value, list):
        return value
    text = " ".join(value)
    return Partial(text) if partial(value) else text


class Unknown:
    """A variable whose value the reader cannot know (bound inside a condition or loop, by
    ``read``...); ``tag`` tells apart the times the script made it so (``#2``: its second)."""

    __slots__ = ("tag",)

    def __init__(self, tag: str = "") -> None:
        self.tag = tag


UNKNOWN = Unknown()
Vars = dict[str, "Value | Unknown"]


def blank_split(text: str) -> list[str]:
    """The words of a partly known value, split on blanks outside the source the reader kept
    (``$(seq 16 8 256)``, ``${X:-a b}``, backquotes): an unevaluated part is one word, never split
    on its own source text. The double quotes kept around a quoted part (``shellwords.quoted``)
    go: an unquoted expansion of ``A=(a "$1")`` splits what ``$1`` holds, as bash does, so
    ``${A[@]}`` is ``$1`` where ``"${A[@]}"`` stays ``"$1"``."""
    words: list[str] = []
    current: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\n":
            if current:
                words.append("".join(current))
                current = []
            i += 1
            continue
        if ch == '"':
            i += 1
            continue
        end = _piece_end(text, i)
        current.append(text[i:end])
        i = end
    if current:
        words.append("".join(current))
    return words


def _piece_end(text: str, i: int) -> int:
    """Where the piece of a word starting at ``i`` ends: an escaped character, a ``$(...)`` or
    ``${...}``, a backquoted part, else the character itself."""
    n = len(text)
    if text[i] == "\\":
        return min(i + 2, n)
    if text[i] == "$" and i + 1 < n and text[i + 1] in "({":
        return closing(text, i + 1)
    if text[i] == "`":
        found = text.find("`", i + 1)
        return n if found < 0 else found + 1
    return i + 1


def closing(text: str, start: int) -> int:
    """The index just past the bracket that closes the one at ``start`` (the end when unclosed)."""
    open_ = text[start]
    close = ")" if open_ == "(" else "}"
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'" and open_ == "(":
            found = text.find("'", i + 1)
            i = len(text) if found < 0 else found + 1
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


# what names a positional parameter inside `${...}`: `${1}`, `${10:-x}`, `${#1}`, `${!2}`, `${@:2}`,
# `${#}`; never `${0}` (the script's name, which `shift` leaves) or `${#X}` (a variable's length)
POSITIONAL = re.compile(r"(?:[#!]?(?:[1-9][0-9]*|[@*])|#)(?![A-Za-z0-9_])")
_NAME_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def mark_references(text: str, label_for: Callable[[str], str | None]) -> str:
    """``text`` (a word's source) with each parameter it reads that ``label_for`` labels (given
    what is inside ``${...}``, or the bare name) written as ``${... LABEL}``: ``$1`` after a
    ``shift`` is not the ``$1`` before it, and ``$X`` after ``read X`` is not the ``$X`` of the
    environment. Escaped text stays as it is."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        inner, end = _reference_at(text, i)
        label = label_for(inner) if inner is not None else None
        if label:
            out.append(f"${{{inner} {label}}}")
            i = end
            continue
        out.append(text[i])  # unlabelled: what it holds is scanned on (`${X:-$1}`)
        i += 1
    return "".join(out)


def _reference_at(text: str, i: int) -> tuple[str | None, int]:
    """(what names the parameter, the index past it) of an expansion at ``i``: the inside of
    ``${...}``, a special or positional (``$1``, ``$@``, ``$#``) or a name; (None, i) elsewhere."""
    if text[i] != "$" or i + 1 >= len(text):
        return None, i
    if text[i + 1] == "{":
        end = closing(text, i + 1)
        return text[i + 2 : end - 1], end
    if text[i + 1] in "123456789@*#":
        return text[i + 1], i + 2
    found = _NAME_AT.match(text, i + 1)
    return (found.group(), found.end()) if found else (None, i)
