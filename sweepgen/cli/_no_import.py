"""``--no-import``: review a repository without running its code.

A spec's ``schema: module:Class`` imports that module from the working directory, as a test runner
would, so checking an untrusted repository runs its code. With ``--no-import`` such schema checks are
skipped, and every skipped one is reported on stderr (and as a GitHub warning in that format): a
check that did not run must never look like a check that passed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from sweepgen.cli._console import safe_text
from sweepgen.errors import Location
from sweepgen.escape import line

F = TypeVar("F", bound=Callable[..., Any])


def option(func: F) -> F:
    return click.option(
        "--no-import",
        "no_import",
        is_flag=True,
        help="do not import `schema: module:Class` models (code from the working directory); for "
        "reviewing untrusted repositories. Those schema checks are reported as skipped.",
    )(func)


def report(skipped: list[tuple[Location, str]], fmt: str = "text") -> None:
    for loc, ref in skipped:
        text = (
            f"schema check skipped (--no-import): `{ref}` was not imported, "
            "so no variant was validated against it"
        )
        if fmt == "github":
            props = f"file={_prop(loc.path)}" + (f",line={loc.line}" if loc.line else "")
            click.echo(f"::warning {props}::{_data(line(text))}")
        click.echo(safe_text(f"{line(str(loc))}: warning: {line(text)}"), err=True)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(line(text)).replace(":", "%3A").replace(",", "%2C")
