"""A Hugging Face ``trainer_state.json`` read a piece at a time: each top-level value, and each entry
of its ``log_history``, decoded alone and handed on, never the whole document as Python objects (a
256 MiB state parsed whole held 2.3 GB). A piece is decoded from a window of the text that doubles up
to ``MAX_PIECE`` characters, so one entry longer than that is refused before it is built; a real
entry is a few hundred characters. NaN and Infinity are let through (the HF Trainer writes NaN as
NaN); integers are bounded, depth is checked per piece.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sweepgen import paths
from sweepgen.run.core import runfiles

HISTORY = "log_history"
MAX_PIECE = 1 << 20  # characters of one log_history entry or one other top-level value
# entries: each costs about 2 us however short it is, and 256 MiB of `[],` is 89 million of them
# (three minutes); the HF Trainer writes each with indent=2, at least 100 characters, so a state
# within the 256 MiB a run file may be holds fewer than 3,000,000
MAX_ENTRIES = 4_000_000
_FIRST_WINDOW = 8 << 10  # at most: a window starts at twice the last piece's length
_DECODER = json.JSONDecoder(parse_int=runfiles.bounded_int)
_SPACE = re.compile(r"[ \t\n\r]*")


def read(path: Path, on_row: Callable[[Any], None]) -> dict[str, Any]:
    """The state's top-level values but ``log_history`` (empty when the document is not an object),
    each entry of ``log_history`` given to ``on_row`` in order. Raises RunFileError."""
    raw = runfiles.read_bytes(path, limit=runfiles.MAX_LOG_BYTES) or b""
    scan = _Scan(raw.decode("utf-8", errors="replace"), path)
    del raw
    if scan.peek() != "{":
        scan.value("the document")
        scan.end()
        return {}
    out = scan.members(on_row)
    scan.end()
    return out


class _Scan:
    def __init__(self, text: str, path: Path) -> None:
        self.text, self.path, self.pos = text, path, 0
        self.window = _FIRST_WINDOW

    def peek(self) -> str:
        match = _SPACE.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos
        return self.text[self.pos : self.pos + 1]

    def take(self, ends: str, what: str) -> str:
        """The next character, one of ``ends`` (a delimiter), or the document is not valid JSON."""
        char = self.peek()
        if not char or char not in ends:
            raise self.invalid(f"Expecting {what}", self.pos)
        self.pos += 1
        return char

    def invalid(self, msg: str, pos: int) -> runfiles.RunFileError:
        return runfiles.invalid_json(self.path, json.JSONDecodeError(msg, self.text, pos))

    def end(self) -> None:
        if self.peek():
            raise self.invalid("Extra data", self.pos)

    def members(self, on_row: Callable[[Any], None]) -> dict[str, Any]:
        """The object at ``pos`` (its ``{`` next), its log_history's entries streamed."""
        self.take("{", "'{'")
        out: dict[str, Any] = {}
        if self.peek() == "}":
            self.pos += 1
            return out
        while True:
            if self.peek() != '"':
                raise self.invalid("Expecting property name enclosed in double quotes", self.pos)
            key = self.value("a key")
            self.take(":", "':' delimiter")
            if key == HISTORY and self.peek() == "[":
                if HISTORY in out:  # decoded whole, the last would win; streamed, both would count
                    raise runfiles.RunFileError(self.path, f"holds `{HISTORY}` twice")
                out[HISTORY] = None
                self.entries(on_row)
            else:
                out[key] = self.value(f"`{key}`")
            if self.take(",}", "',' delimiter") == "}":
                return out

    def entries(self, on_row: Callable[[Any], None]) -> None:
        self.take("[", "'['")
        if self.peek() == "]":
            self.pos += 1
            return
        number = 0
        while True:
            number += 1
            if number > MAX_ENTRIES:
                raise runfiles.RunFileError(
                    self.path, f"holds more than {MAX_ENTRIES:,} `{HISTORY}` entries (a trainer's hold fewer)"
                )
            on_row(self.value(f"`{HISTORY}` entry {number}"))
            if self.take(",]", "',' delimiter") == "]":
                return

    def value(self, what: str) -> Any:
        """The JSON value at ``pos``, decoded from a window of the text grown until it holds it."""
        self.peek()
        window = self.window
        while True:
            piece = self.text[self.pos : self.pos + window]
            whole = self.pos + len(piece) >= len(self.text)
            try:
                value, end = _DECODER.raw_decode(piece)
            except json.JSONDecodeError as err:
                if whole:
                    raise self.invalid(err.msg, self.pos + err.pos) from None
                end = -1  # maybe cut by the window
            except RecursionError:
                raise runfiles.RunFileError(self.path, f"{what} is nested too deeply") from None
            if whole or 0 <= end < len(piece):  # a value ending at the window's edge may be cut there
                break
            if window >= MAX_PIECE:
                raise runfiles.RunFileError(
                    self.path, f"{what} is {MAX_PIECE:,} characters or longer (an entry is a few hundred)"
                )
            window *= 2
        if paths.too_deep(value, runfiles.MAX_DEPTH):
            raise runfiles.RunFileError(
                self.path, f"{what} is nested more than {runfiles.MAX_DEPTH} levels deep"
            )
        self.pos += end
        self.window = min(max(64, 2 * end), _FIRST_WINDOW)  # the next entry is likely as long
        return value
