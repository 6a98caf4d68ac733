"""Rich consoles for the CLI, created on first use so importing a command stays cheap."""

from __future__ import annotations

from functools import cache


@cache
def stdout():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def stderr():
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)
