"""Click parameter types shared by commands."""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

from sweepgen.errors import Location, UserError
from sweepgen.run.core.runfiles import HELD_BYTES

F = TypeVar("F", bound=Callable[..., Any])


class _Seconds(click.ParamType[float, Any]):
    """A finite, non-negative number of seconds. ``float`` alone accepts ``nan`` and ``inf``, and a
    NaN compares false with everything, so a deadline computed from it fires at once."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds < 0:
            self.fail(f"{value!r} is not a finite, non-negative number of seconds", param, ctx)
        return seconds


SECONDS = _Seconds()


def only_option(what: str = "Only these runs") -> Callable[[F], F]:
    """`--only NAME` as `run`, `status` and `cancel` take it: one option, one spelling (the names are
    matched by sweepgen.run.core.plan.tasks.select)."""
    return click.option(
        "--only",
        multiple=True,
        metavar="NAME",
        help=f"{what} (run, variant or seed-group name; repeat or comma-separate).",
    )


def output_root_option(help_text: str) -> Callable[[F], F]:
    """`-o/--output DIR`: the output root, the one meaning of `-o` in every command that has it
    (render, check, init, list). Default: `output` of [tool.sweepgen] in pyproject.toml, else `generated`;
    the value reaching the command is always a path (see sweepgen.settings)."""

    def resolve(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
        if value is None:
            from sweepgen import settings

            return settings.load().output_root()
        from sweepgen.fs.confine import in_git_folder

        if in_git_folder(os.path.realpath(value), "/"):
            raise UserError(
                f"-o {value!r} lies in git's own .git folder",
                location=Location("-o"),
                hint="git runs what its folder holds (hooks, config): name a folder of the work tree",
            )
        return value

    return click.option(
        "-o",
        "--output",
        "out_root",
        default=None,
        callback=resolve,
        type=click.Path(file_okay=False),
        help=help_text + " [default: `output` of [tool.sweepgen] in pyproject.toml, else generated]",
    )


def _set_limits(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    if not value and "sweepgen.compile.spec.limits" not in sys.modules:
        # nothing was set in this process: loading the spec model (pydantic) would only slow `diff`
        return
    from sweepgen.compile.spec import limits

    # every command that has the option sets them, so no earlier command's values linger
    limits.set_command_line(dict(limits.parse_pair(pair) for pair in value))


limit_option = click.option(
    "--limit",
    "limits",
    multiple=True,
    metavar="KEY=VALUE",
    expose_value=False,
    callback=_set_limits,
    help="raise (or lower) a limit's ceiling for this command: a spec's own `limits:` may not pass "
    "it (keys: variants, output_bytes, yaml_nodes, input_bytes, eval_seconds, total_seconds; "
    "command_seconds, the command line's alone: every spec of one check or render together)",
)


def trusting(param: str) -> Callable[[F], F]:
    """The command's folder argument ``param`` is named by the person running sweepgen: run files
    below it are walked from it (``runfs.trust``), links in the folder's own path used as given,
    none below it followed. Goes directly above the command's ``def`` (under click's decorators)."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from sweepgen.fs import runfs

            with runfs.trust(kwargs[param]):
                return fn(*args, **kwargs)

        return cast("F", wrapper)

    return decorate


_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def byte_size(text: str) -> int:
    """A byte count: a whole number with an optional K, M, G or T (binary) suffix."""
    digits, unit = text.strip(), 1
    if digits[-1:].upper() in _UNITS:
        digits, unit = digits[:-1], _UNITS[digits[-1].upper()]
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 18 and int(digits) >= 1):
        raise click.BadParameter(f"{text!r} is not a size: write e.g. 8G, 512M or 1000000")
    return int(digits) * unit


def read_budget_option(what: str) -> Callable[[F], F]:
    """``--max-read-bytes``: the run files one command reads, together (``runfiles.read_budget``);
    ``what`` names the files the command reads."""
    return click.option(
        "--max-read-bytes",
        "max_read_bytes",
        default="2G",
        show_default=True,
        metavar="SIZE",
        callback=lambda _ctx, _param, value: byte_size(value),
        help=f"The most the run files read ({what}) may hold together, with the logged values kept "
        f"from them at {HELD_BYTES} bytes each: each file is bounded, but a shared runs folder can hold "
        "many large ones (K, M, G, T suffixes).",
    )
