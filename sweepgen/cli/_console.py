"""Rich consoles for the CLI, created on first use so importing a command stays cheap."""

from __future__ import annotations

from functools import cache


@cache
def stdout():
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def stderr():
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)
