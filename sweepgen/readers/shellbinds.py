"""Which variables a builtin binds by name (``read X``, ``printf -v X``, ``mapfile A``, ``let N=1``,
``getopts s X``, ``wait -p X``): what it puts there comes from running it, so after it those
variables are not known. ``source``/``.`` of a file and ``eval`` of code that is not known may bind
any variable."""

from __future__ import annotations

import re

from sweepgen.readers.shellwords import arithmetic_assigned

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ANY = None  # every variable: the code that runs is not known
# `builtin read X` and `command read X` run the builtin itself
_PREFIXES = ("builtin", "command")
# options of these builtins that take the next word as their value (never a name they bind)
_VALUED = {"read": set("dinNptu"), "mapfile": set("dnOsuCc"), "readarray": set("dnOsuCc")}
_DEFAULT = {"read": ["REPLY"], "mapfile": ["MAPFILE"], "readarray": ["MAPFILE"]}


def bound_names(words: list[str | None]) -> list[str] | None:
    """The variables the command ``words`` binds by name (a word not known is None); ``ANY``
    (None) when it may bind any variable. Commands that bind nothing give an empty list."""
    while len(words) > 1 and words[0] in _PREFIXES and words[1] is not None and not words[1].startswith("-"):
        words = words[1:]
    head, rest = words[0], words[1:]
    if head in ("source", "."):
        return ANY
    if head == "eval":
        return ANY if None in rest else []  # a known CODE is read where it runs (Reader.eval)
    if head not in _BINDERS:
        return []
    if None in rest:
        return ANY  # `read "$NAME"`: the name itself is not known
    return _BINDERS[head]([w for w in rest if w is not None])


def _operands(head: str, rest: list[str]) -> list[str]:
    """``read``/``mapfile``'s names: the words after the options (an option's value skipped, ``-a
    NAME`` included), or the default name when none is given."""
    names: list[str] = []
    valued = _VALUED[head]
    i = 0
    while i < len(rest) and rest[i].startswith("-") and rest[i] != "--":
        letters = rest[i][1:]
        for at, letter in enumerate(letters):
            if (letter == "a" and head == "read") or letter in valued:
                value = letters[at + 1 :] or (rest[i + 1] if i + 1 < len(rest) else "")
                if not letters[at + 1 :]:
                    i += 1
                if letter == "a":
                    names.append(value)
                break
        i += 1
    if i < len(rest) and rest[i] == "--":
        i += 1
    operands = rest[i:]
    if head != "read":
        operands = operands[:1]
    return _names(names + operands) or ([] if names else _DEFAULT[head])


def _printf(rest: list[str]) -> list[str]:
    """``printf -v NAME`` (or ``-vNAME``) binds NAME; a printf without ``-v`` binds nothing."""
    for i, word in enumerate(rest):
        if word == "-v" and i + 1 < len(rest):
            return _names([rest[i + 1]])
        if word.startswith("-v") and len(word) > 2:
            return _names([word[2:]])
        if not word.startswith("-") or word == "--":
            break
    return []


def _let(rest: list[str]) -> list[str]:
    """``let N=1 M++``: each word is an arithmetic expression; what it assigns is bound."""
    return [name for word in rest for name in arithmetic_assigned(word)]


def _getopts(rest: list[str]) -> list[str]:
    """``getopts SPEC NAME [ARGS]``: NAME, and the option's value and index."""
    return [*_names(rest[1:2]), "OPTARG", "OPTIND"]


def _wait(rest: list[str]) -> list[str]:
    """``wait -p NAME``: the id of the job that ended."""
    return [_base(rest[i + 1]) for i, word in enumerate(rest[:-1]) if word == "-p"]


def _names(words: list[str]) -> list[str]:
    """Each word's variable (``A[2]`` names ``A``); a word that names none binds nothing."""
    return [_base(w) for w in words if _NAME.match(w)]


def _base(word: str) -> str:
    found = _NAME.match(word)
    return found.group() if found else word


_BINDERS = {
    "read": lambda rest: _operands("read", rest),
    "mapfile": lambda rest: _operands("mapfile", rest),
    "readarray": lambda rest: _operands("readarray", rest),
    "printf": _printf,
    "let": _let,
    "getopts": _getopts,
    "wait": _wait,
}
