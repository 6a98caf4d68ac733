"""Rich consoles for the CLI, created on first use so importing a command stays cheap.

Every piece of text a console writes is data-safe (``safe_text``): control characters, ESC
sequences and bidi overrides from run names, metric names or folder names are written as visible
escapes, and no line may begin with ``::`` (a GitHub Actions workflow command) — whichever command
printed it and however the name reached the table. Rich's own styling is not text and is kept.

The consoles read no rich markup in strings (``markup=False``): a table cell, title or header is
data (a run's reason `[/bold]` from a status file crashed `status`; `[red]r` printed as `r`, another
run's name). Styling is given as ``rich.text.Text`` with a style, or by a ``print(..., markup=True)``
whose data parts are ``rich.markup.escape``d.

On a terminal, tables fit its width. Anywhere else (a pipe, a file, CI logs) they are printed at
their full natural width: rich's 80-column default would cut cells, so rows that differ only in
their tails would look identical. An explicit COLUMNS (a positive number) always wins.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from sweepgen.escape import lines

if TYPE_CHECKING:
    from rich.console import Console
    from rich.segment import Segment

UNBOUNDED = 100_000  # "as wide as the content": rich only pads what asks to expand
_verbosity = 0  # -1 quiet, 0 normal, 1 verbose; set once per invocation by the group callback


def set_verbosity(level: int) -> None:
    global _verbosity
    _verbosity = level


def verbose() -> bool:
    """Whether -v was given to sweepgen itself (`sweepgen -v check`)."""
    return _verbosity > 0


def info(text: str) -> None:
    """A status line (what was written, a summary): shown unless -q. Goes to stdout."""
    if _verbosity >= 0:
        import click

        click.echo(safe_text(text))


_COMMAND_START = re.compile(r"(?m)^([ \t]*)::")  # a runner may strip the line before reading it


def safe_text(text: str, *, line_start: bool = True) -> str:
    """``text`` with control characters escaped (line breaks kept) and a ``::`` that would begin a
    line (a CI workflow command such as ``::error::``) written as ``\\x3a:``."""
    text = lines(text)
    if "::" not in text:
        return text
    if not line_start:
        head = len(text) - len(text.lstrip(" \t"))
        if text[head:].startswith("::"):
            return text[: head + 2] + _COMMAND_START.sub(r"\1\\x3a:", text[head + 2 :])
    return _COMMAND_START.sub(r"\1\\x3a:", text)


def _safe_segments(buffer: Iterable[Segment]) -> Iterator[Segment]:
    from rich.segment import Segment

    at_start = True
    for segment in buffer:
        text, style, control = segment
        if not control and text:
            segment = Segment(safe_text(text, line_start=at_start), style, control)
            at_start = text.endswith("\n") or (at_start and not text.strip(" \t"))
        yield segment


def _safe_console(**options: Any) -> Console:
    from rich.console import Console

    class SafeConsole(Console):
        def _render_buffer(self, buffer: Iterable[Segment]) -> str:
            return super()._render_buffer(_safe_segments(buffer))

    return SafeConsole(**options)


def detail(text: str) -> None:
    """What a step did and how long it took: shown with -v only. Goes to stderr."""
    if _verbosity > 0:
        import click

        click.echo(safe_text(text), err=True)


MIN_WIDTH = 20  # below this a table has no room for a single cell


def _width(stream: object) -> int | None:
    """COLUMNS when it is a usable width; a COLUMNS rich would obey but cannot print in (0, 5, "x":
    `COLUMNS=0` made every table render as nothing, with exit 0) counts as unset."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) >= MIN_WIDTH:
        return int(columns)
    isatty = getattr(stream, "isatty", None)
    return None if isatty is not None and isatty() else UNBOUNDED


@cache
def stdout() -> Console:
    # rich (~20 ms) loads only when there is something to print, not for --help
    return _safe_console(highlight=False, markup=False, soft_wrap=True, width=_width(sys.stdout))


@cache
def stderr() -> Console:
    # rich (~20 ms) loads only when there is something to print, not for --help
    return _safe_console(stderr=True, highlight=False, markup=False, soft_wrap=True, width=_width(sys.stderr))
