"""What a shell variable holds while a script is read: known text, text that still holds source the
reader could not expand (``Partial``), an array of either, or nothing knowable (``UNKNOWN``)."""

from __future__ import annotations

import re

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
    """A variable whose value the reader cannot know (bound inside a condition or loop)."""


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
        end = i + 1
        if ch == "\\":
            end = min(i + 2, n)
        elif ch == "$" and i + 1 < n and text[i + 1] in "({":
            end = closing(text, i + 1)
        elif ch == "`":
            found = text.find("`", i + 1)
            end = n if found < 0 else found + 1
        current.append(text[i:end])
        i = end
    if current:
        words.append("".join(current))
    return words


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
_POSITIONAL_BRACED = re.compile(r"(?:[#!]?(?:[1-9][0-9]*|[@*])|#)(?![A-Za-z0-9_])")


def mark_positionals(text: str, label: str) -> str:
    """``text`` (a word's source) with each positional parameter it reads marked with ``label``,
    the state the positionals are in (``shift 2``): ``$1`` after a ``shift`` is not the ``$1``
    before it, so ``X=$1; shift`` is never ``shift; X=$1``. Escaped text and ``$0`` stay as they are."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        if ch == "$" and i + 1 < n and text[i + 1] in "123456789@*#":
            out.append(f"${{{text[i + 1]} after {label}}}")
            i += 2
            continue
        if ch == "$" and text.startswith("{", i + 1):
            end = closing(text, i + 1)
            inner = text[i + 2 : end - 1]
            if _POSITIONAL_BRACED.match(inner):
                out.append(f"${{{inner} after {label}}}")
                i = end
                continue
        out.append(ch)
        i += 1
    return "".join(out)
