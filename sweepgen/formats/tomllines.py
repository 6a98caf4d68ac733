"""Where each key of a TOML file is written: ``[table]``, ``[[array.of.tables]]`` (each element
an index) and ``key = value`` lines, dotted and quoted keys included. tomllib gives values only;
this scan gives diff's ``--format json`` its ``old_at``/``new_at`` and every error about a TOML
value (pyproject.toml's ``[tool.sweepgen]``, ``init --from``) its line and column. A key inside an
inline table or a multi-line array takes the line of the key that holds it."""

from __future__ import annotations

import re
from typing import Any

_BARE = r"[A-Za-z0-9_-]+"
_KEY = rf'(?:{_BARE}|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_DOTTED = re.compile(rf"\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*")
_PART = re.compile(_KEY)


def toml_lines(text: str) -> dict[tuple[Any, ...], int]:
    """{key path: line} for every table, array-of-tables element and key the file writes."""
    lines: dict[tuple[Any, ...], int] = {}
    counts: dict[tuple[Any, ...], int] = {}
    table: tuple[Any, ...] = ()
    closer: str | None = None  # inside a multi-line string or array: what closes it
    depth = 0
    for number, line in enumerate(text.splitlines(), 1):
        if closer is not None:
            closer, depth = _still_open(line, closer, depth)
            continue
        stripped = line.strip()
        if stripped.startswith("[["):
            keys = _keys(stripped[2 : stripped.find("]]")])
            counts[keys] = counts.get(keys, 0) + 1
            table = (*keys, counts[keys] - 1)
            _mark(lines, table, number)
        elif stripped.startswith("["):
            table = _keys(stripped[1 : stripped.find("]")])
            _mark(lines, table, number)
        elif (found := _DOTTED.match(line)) and line[found.end() : found.end() + 1] == "=":
            _mark(lines, (*table, *_keys(found.group(1))), number)
            closer, depth = _opens(line[found.end() + 1 :].strip())
    return lines


def key_place(text: str, keys: tuple[str, ...]) -> tuple[int, int]:
    """(line, column) of ``keys`` in ``text``: the line of the deepest of them written on a line of
    its own, the column of the last one written on it (``limits = {variants = 3}``: the line of
    ``limits``, the column of ``variants``); (0, 0) when none of them is written."""
    lines = toml_lines(text)
    path = keys
    while path not in lines:
        if len(path) <= 1:
            return 0, 0
        path = path[:-1]
    number = lines[path]
    line = text.splitlines()[number - 1]
    found = [line.find(key) for key in reversed(keys) if key in line]
    return number, (found[0] if found else len(line) - len(line.lstrip())) + 1


_ERROR_AT = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)")


def error_place(message: str, text: str) -> tuple[str, int, int]:
    """A tomllib error's message without its place, and the (line, column) it names: tomllib puts
    them in the message ("... (at line 3, column 7)", "(at end of document)": the last line)."""
    found = _ERROR_AT.search(message)
    if found is None:
        return message, 0, 0
    if found.group(1) is None:
        return _ERROR_AT.sub("", message), text.count("\n") + 1, 1
    return _ERROR_AT.sub("", message), int(found.group(1)), int(found.group(2))


def _opens(value: str) -> tuple[str | None, int]:
    """Does a value start a multi-line string or array? (what closes it, bracket depth)"""
    for quote in ('"""', "'''"):
        if value.startswith(quote) and value.count(quote) == 1:
            return quote, 0
    depth = _brackets(value) if value.startswith("[") else 0
    return ("]", depth) if depth > 0 else (None, 0)


def _still_open(line: str, closer: str, depth: int) -> tuple[str | None, int]:
    if closer != "]":
        return (None, 0) if line.count(closer) % 2 == 1 else (closer, 0)
    depth += _brackets(line)
    return (None, 0) if depth <= 0 else (closer, depth)


def _keys(dotted: str) -> tuple[Any, ...]:
    return tuple(_unquote(part) for part in _PART.findall(dotted))


def _unquote(key: str) -> str:
    if key.startswith('"'):
        return key[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return key[1:-1] if key.startswith("'") else key


def _mark(lines: dict[tuple[Any, ...], int], path: tuple[Any, ...], number: int) -> None:
    for end in range(1, len(path) + 1):
        lines.setdefault(path[:end], number)
    lines[path] = number


def _brackets(text: str) -> int:
    """Opening minus closing brackets outside strings and comments."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'', "", text)
    text = text.split("#", 1)[0]
    return text.count("[") - text.count("]")
