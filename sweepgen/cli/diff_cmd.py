"""`sweepgen diff A B`: semantic diff of two configs, optionally gated by `--allow` globs.

Exit codes: 0 the configs are equal, or every change is allowed by an --allow glob; 1 some change
is not allowed (with no --allow at all, any change: like diff(1)); 2 bad input.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from sweepgen.cli._console import safe_text
from sweepgen.cli._params import byte_size, limit_option

if TYPE_CHECKING:  # the readers load when the command runs, not for --help
    from sweepgen.readers.compare import Comparison
    from sweepgen.readers.diff import Change
    from sweepgen.readers.model import NotEvaluated, ReadResult

Paths = set[tuple[Any, ...]]  # the paths of changes --allow does not allow


@click.command("diff")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option(
    "--allow",
    "allow",
    multiple=True,
    metavar="GLOB",
    help="A path that may differ (repeatable). `*` is one path segment, `**` any depth, "
    "[N] a list index, e.g. --allow 'debate_streamer.reward_shaping_params.**'.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: one line per change, `path: old -> new`; json: a machine-readable report.",
)
@click.option(
    "--resolve-bases",
    is_flag=True,
    help="Follow bases as the trainer would: mmengine `_base_` files (`_delete_=True` replaces, "
    "`_base_.x` reads them), `with read_base(): from .x import *` and detectron2-style "
    "`from ..common.optim import SGD as optimizer`. A base that cannot be found is an error.",
)
@click.option(
    "--yaml",
    "yaml_version",
    type=click.Choice(["1.1", "1.2", "omegaconf"]),
    default=None,
    help="How to read YAML files that are not sweepgen specs: omegaconf (the default when either "
    "file uses `${...}` or `defaults:`: `1e-5` is a float, node interpolations resolved), 1.1 "
    "(the default otherwise: what PyYAML reads, `on` is True) or 1.2 (`on` is a string). Specs "
    "are always YAML 1.2. Scalars the readings disagree on are listed as warnings.",
)
@limit_option
@click.option(
    "--max-bytes",
    "max_bytes",
    default=None,
    metavar="SIZE",
    callback=lambda _ctx, _param, value: None if value is None else byte_size(value),
    help="Read files of up to SIZE bytes, whatever their format (K, M, G suffixes). Default: 32M "
    "for JSON, 2M for YAML, TOML and Python, 1M for shell scripts (parsing costs seconds a MiB); "
    "the files of one diff, its bases included, together at most twice that.",
)
@click.option(
    "--as",
    "readers",
    multiple=True,
    type=click.Choice(["json", "yaml", "toml", "python", "shell", "auto"]),
    metavar="json|yaml|toml|python|shell|auto",
    help="Read the files as this format whatever their suffix (a .conf that is JSON, a launch "
    "script without .sh). Once: both files; twice: A, then B (`auto`: by the suffix).",
)
def diff(
    a: str,
    b: str,
    allow: tuple[str, ...],
    fmt: str,
    resolve_bases: bool,
    yaml_version: str | None,
    readers: tuple[str, ...],
    max_bytes: int | None,
) -> int:
    """Compare two configs path by path, type-strictly (1, 1.0 and True differ).

    A and B are YAML, JSON, TOML, Python (evaluated safely through the AST, never imported or run;
    ml_collections get_config() included) or shell/sbatch/launch scripts (read with the bash
    grammar: #SBATCH lines, exported variables, and each command keyed by its program, launchers
    apart, with its argparse flags and Hydra overrides nested), or SPEC.yaml:VARIANT for one
    resolved variant of a sweep spec. What cannot be evaluated is compared by its normalised
    source and shown as <not evaluated at FILE:LINE: ...>.
    """
    # the readers load when the command runs, not for --help
    from sweepgen.readers.compare import compare

    result = compare(
        a,
        b,
        allow=allow,
        resolve_bases=resolve_bases,
        yaml_version=yaml_version,
        variant_config=_variant_config,
        kinds=_kinds(readers),
        max_bytes=max_bytes,
    )
    _warn(result)
    if fmt == "json":
        click.echo(json.dumps(_json_report(a, b, allow, result), indent=2, sort_keys=True))
    else:
        _print_text(result.changes, result.refused, gated=bool(allow))
    return result.exit_code


def _warn(result: Comparison) -> None:
    """On stderr: the readers' warnings, the parts compared by their source, and --allow globs
    that match nothing."""
    for warning in result.warnings:
        click.echo(safe_text(f"warning: {warning}"), err=True)
    if result.opaque:
        click.echo(_opaque_note(result.opaque), err=True)
    for glob, close in result.unmatched.items():
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        click.echo(f"warning: --allow {glob!r} matches no path in either config{hint}", err=True)


def _opaque_note(opaque: list[NotEvaluated]) -> str:
    """Parts no reader could evaluate are compared by their source text: say so, and where, since a
    change there is a change of text, not of value."""
    places = ", ".join(dict.fromkeys(node.at for node in opaque if node.at))
    return (
        f"note: {len(opaque)} part{'s' if len(opaque) != 1 else ''} could not be evaluated and "
        f"{'are' if len(opaque) != 1 else 'is'} compared by normalised source ({_shorten(places)})"
    )


def _json_report(a: str, b: str, allow: tuple[str, ...], result: Comparison) -> dict[str, Any]:
    """--format json: the report, each change with where its old and new values are written."""
    report = _report(a, b, allow, result.changes, result.refused)
    for change, row in zip(result.changes, report["changes"]):
        row["old_at"] = _at(result.first, change.path) if change.kind != "added" else None
        row["new_at"] = _at(result.second, change.path) if change.kind != "removed" else None
    return report


def _kinds(readers: tuple[str, ...]) -> tuple[str | None, str | None]:
    """``--as``: once for both files, twice for A then B; ``auto`` is the suffix's reader."""
    from sweepgen.errors import UserError

    if len(readers) > 2:
        raise UserError(
            f"--as was given {len(readers)} times",
            hint="give it once (both files) or twice (A, then B)",
        )
    forced = [None if r == "auto" else r for r in readers]
    if len(forced) == 1:
        return forced[0], forced[0]
    return (forced[0], forced[1]) if forced else (None, None)


def _variant_config(spec: str, variant: str) -> Any:
    """A spec's variant, resolved by the compile API (readers never import the compiler)."""
    # the compiler (pydantic, jinja2: ~0.15 s) loads only for a SPEC:VARIANT side
    from sweepgen import settings
    from sweepgen.compile.api import resolve_variant

    return resolve_variant(spec, variant, settings.load().output_root())


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _at(result: ReadResult, path: tuple[Any, ...]) -> str | None:
    line = result.line_of(path)
    return f"{result.path}:{line}" if line else None


def _report(a: str, b: str, allow: tuple[str, ...], changes: list[Change], refused: Paths) -> dict[str, Any]:
    # the readers load when the command runs, not for --help
    from sweepgen.readers.diff import jsonable

    return {
        "a": a,
        "b": b,
        "allow": list(allow),
        "equal": not changes,
        "ok": not refused,
        "changes": [
            {
                "path": change.dotted,
                "kind": change.kind,
                "old": jsonable(change.old),
                "new": jsonable(change.new),
                "old_type": change.old_type,
                "new_type": change.new_type,
                "allowed": change.path not in refused,
            }
            for change in changes
        ],
    }


def _print_text(changes: list[Change], refused: Paths, *, gated: bool) -> None:
    if not changes:
        click.echo("no differences")
        return
    for change in changes:
        # a key is data: `::error::x` must not start a CI workflow command (escaped before styling)
        line = safe_text(
            f"{change.dotted}: {_show(change.old, change.old_type, change)} -> "
            f"{_show(change.new, change.new_type, change)}"
        )
        if gated and change.path in refused:
            line = click.style(line + "  [not allowed]", fg="red")
        click.echo(line)
    summary = f"{len(changes)} change{'s' if len(changes) != 1 else ''}"
    if gated:
        summary += f", {len(refused)} not allowed by --allow" if refused else ", all allowed"
    click.echo(summary)


def _show(value: Any, type_name: str | None, change: Change) -> str:
    # the readers load when the command runs, not for --help
    from sweepgen.readers.diff import ABSENT, float_text

    if value is ABSENT:
        return "<absent>"
    text = float_text(value) if isinstance(value, float) else repr(value)
    # name the types when they are what changed, so 1 -> 1.0 is not a puzzle
    if change.kind == "type_changed":
        text += f" ({type_name})"
    return text
