"""Which variables a builtin binds by name (``read X``, ``printf -v X``, ``mapfile A``, ``let N=1``,
``getopts s X``, ``wait -p X``): what it puts there comes from running it, so after it those
variables are not known. ``source``/``.`` of a file and ``eval`` of code that is not known may bind
any variable."""

from __future__ import annotations

import re
from collections.abc import Callable

from sweepgen.readers.shell.shellwords import arithmetic_assigned

_VARIABLE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[.*\])?", re.S)
ANY = None  # every variable: the code that runs is not known
# `builtin read X` and `command read X` run the builtin itself
_PREFIXES = ("builtin", "command")


def bound_names(words: list[str | None]) -> list[str] | None:
    """The variables the command ``words`` binds by name (a word not known is None); ``ANY``
    (None) when it may bind any variable. Commands that bind nothing give an empty list. A name
    too many is harmless (its later uses stay not evaluated); one too few never is."""
    words = _unprefixed(words)
    head, rest = words[0] or "", words[1:]
    if head in ("source", "."):
        return ANY
    binder = _BINDERS.get(head)
    if binder is None:
        return []
    # `read "$NAME"`, `eval "$CODE"`: what is bound is not known (a known CODE is read where it runs)
    return ANY if None in rest else binder([w for w in rest if w is not None])


def _unprefixed(words: list[str | None]) -> list[str | None]:
    """``builtin read X`` / ``command read X`` run the builtin itself."""
    while len(words) > 1 and words[0] in _PREFIXES and not (words[1] or "-").startswith("-"):
        words = words[1:]
    return words


def _reads(default: str) -> Callable[[list[str]], list[str]]:
    """``read``/``mapfile``: every word that names a variable, the array of ``-a NAME``/``-aNAME``
    and the default name (``REPLY``, ``MAPFILE``), whatever the options are."""

    def names(rest: list[str]) -> list[str]:
        arrays = [w[1:].partition("a")[2] for w in rest if w.startswith("-")]
        return [*_names([*rest, *arrays]), default]

    return names


def _printf(rest: list[str]) -> list[str]:
    """``printf -v NAME`` (or ``-vNAME``) binds NAME; a printf without ``-v`` binds nothing."""
    first = rest[0] if rest else ""
    if first == "-v":
        return _names(rest[1:2])
    return _names([first[2:]]) if first.startswith("-v") else []


def _let(rest: list[str]) -> list[str]:
    """``let N=1 M++``: each word is an arithmetic expression; what it assigns is bound."""
    return [name for word in rest for name in arithmetic_assigned(word)]


def _getopts(rest: list[str]) -> list[str]:
    """``getopts SPEC NAME [ARGS]``: NAME, and the option's value and index."""
    return [*_names(rest[1:2]), "OPTARG", "OPTIND"]


def _wait(rest: list[str]) -> list[str]:
    """``wait -p NAME``: the id of the job that ended."""
    return _names([after for word, after in zip(rest, rest[1:]) if word == "-p"])


def _names(words: list[str]) -> list[str]:
    """Each word that is a variable (``A[2]`` names ``A``)."""
    return [found.group(1) for w in words if (found := _VARIABLE.fullmatch(w))]


_BINDERS: dict[str, Callable[[list[str]], list[str]]] = {
    "read": _reads("REPLY"),
    "mapfile": _reads("MAPFILE"),
    "readarray": _reads("MAPFILE"),
    "printf": _printf,
    "let": _let,
    "getopts": _getopts,
    "wait": _wait,
    "eval": lambda rest: [],  # known code: read where it runs (Reader.eval)
}
