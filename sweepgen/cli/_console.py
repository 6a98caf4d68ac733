"""Rich consoles for the CLI, created on first use so importing a command stays cheap."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

MIN_WIDTH = 20  # below this a table has no room for a single cell


def _width() -> int | None:
    """An explicit width when ``COLUMNS`` is set to something rich would obey but cannot print in
    (``COLUMNS=0`` made every table render as nothing, with exit 0); else let rich decide."""
    columns = os.environ.get("COLUMNS")
    if columns is None:
        return None
    if not columns.strip().isdigit() or int(columns) < MIN_WIDTH:
        return 80
    return None


def _console(**kwargs: Any) -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, width=_width(), **kwargs)


@cache
def stdout() -> Any:
    return _console()


@cache
def stderr() -> Any:
    return _console(stderr=True)
