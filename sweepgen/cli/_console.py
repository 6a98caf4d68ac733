"""Rich consoles for the CLI, created on first use so importing a command stays cheap.

On a terminal, tables fit its width. Anywhere else (a pipe, a file, CI logs) they are printed at
their full natural width: rich's 80-column default would cut cells, so rows that differ only in
their tails would look identical. An explicit COLUMNS (a positive number) always wins.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

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

        click.echo(text)


def detail(text: str) -> None:
    """What a step did and how long it took: shown with -v only. Goes to stderr."""
    if _verbosity > 0:
        import click

        click.echo(text, err=True)


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
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, width=_width(sys.stdout))


@cache
def stderr() -> Console:
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True, width=_width(sys.stderr))
