"""Making user data safe to print on one line of a terminal, a CI log or a file header.

Keys, values and file names come from specs and configs that may be hostile: a newline in a key
would start a log line with ``::error`` or ``::add-mask::`` (a GitHub Actions workflow command), an
ESC sequence would drive the terminal, a bidi override would make a line read differently from what
it says. Every character that is not plain printable text (Unicode categories Cc, Cf, Zl, Zp, Cs,
and U+0085) is written as a visible Python-style escape instead: ``\\n``, ``\\x1b``, ``\\u202e``.
"""

from __future__ import annotations

import re
import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
# Fast path: nothing outside printable ASCII means nothing to escape (besides a backslash, which is
# kept as is: only text that needed escaping gets its backslashes doubled, so plain Windows paths
# and regexes read unchanged).
_PLAIN_ASCII = re.compile(r"[\x20-\x7e]*")


def _unsafe(ch: str) -> bool:
    # Cs: a lone surrogate, how Python holds a file name's bytes that are not UTF-8
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def line(text: str) -> str:
    """``text`` with every control, format and line/paragraph separator character escaped."""
    if _PLAIN_ASCII.fullmatch(text):
        return text
    if not any(_unsafe(ch) for ch in text):
        return text
    return "".join(_escaped(ch) for ch in text)


def _escaped(ch: str) -> str:
    """One character as ``line`` writes it: by its name (``\\n``), by its code if unsafe, else itself."""
    if ch in _NAMED:
        return _NAMED[ch]
    if not _unsafe(ch):
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def fs_name(name: str) -> str:
    """A name read from the file system as text: bytes that are not UTF-8 (held by Python as lone
    surrogates, which no UTF-8 writer accepts) written as ``\\xNN``."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


def lines(text: str) -> str:
    """Multi-line text (a diff) with each line escaped; only ``\\n`` still ends a line."""
    return "\n".join(line(part) for part in text.split("\n"))


_C0 = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def c0(text: str) -> str:
    """``text`` with C0 controls and DEL written as ``\\xNN``; tabs and line breaks kept (a CSV
    cell quotes them), so the cell reads as the data it is and no reader meets a raw NUL."""
    return _C0.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def first_c0(text: str) -> str | None:
    """The first C0 control or DEL in ``text`` (tabs and line breaks aside), or None."""
    found = _C0.search(text)
    return found.group(0) if found else None


# A spreadsheet opening a CSV reads a cell that starts with one of these as a formula (OWASP's
# "CSV injection": `=HYPERLINK(...)`, `@SUM(...)`, `-2+3`), and run names, metric names and config
# values are a pull request's to choose. A `;` inside a cell is a cell break to a spreadsheet whose
# locale separates lists with it (German, French Excel), though the comma CSV leaves it unquoted.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_LIST_BREAK = re.compile(r"(;)")
# what a spreadsheet reads as a number, not a formula: `-0.5` stays a number (as do the spellings
# Python and JSON give infinities and NaN)
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)


def csv_cell(value: object) -> object:
    """``value`` as a CSV cell a spreadsheet reads as the data it is: a number stays a number, None is
    empty, and text has C0 controls escaped (``c0``, a CR too) and a ``'`` put before a formula
    character at its start or after a ``;`` (OWASP), unless that piece is a plain number."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    text = c0(value)
    if any(ch in text for ch in "=+-@\t\r"):
        pieces = _LIST_BREAK.split(text)  # the `;` at odd indices
        text = "".join(p if i % 2 else _neutral(p) for i, p in enumerate(pieces))
    # a CR is a row break to a CSV reader, and a writer ending rows with "\n" leaves it unquoted
    return text.replace("\r", "\\r")


def _neutral(piece: str) -> str:
    # a lone `-` (the tables' "no value") is text to a spreadsheet, not a formula
    if piece.startswith(_FORMULA_START) and piece != "-" and not _NUMBER.fullmatch(piece):
        return "'" + piece
    return piece
