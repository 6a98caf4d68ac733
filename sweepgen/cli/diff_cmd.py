"""`sweepgen diff A B`: semantic diff of two configs, optionally gated by `--allow` globs.

Exit codes: 0 the configs are equal, or every change is allowed by an --allow glob; 1 some change
is not allowed (with no --allow at all, any change: like diff(1)); 2 bad input.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


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
    help="Compare what the files evaluate to, mmengine-style: merge `_base_` files in "
    "(`_delete_=True` replaces) and substitute names bound earlier in each Python file.",
)
def diff(a: str, b: str, allow: tuple[str, ...], fmt: str, resolve_bases: bool) -> int:
    """Compare two configs path by path, type-strictly (1, 1.0 and True differ).

    A and B are YAML, JSON, TOML, Python (read through the AST, never imported) or shell/sbatch
    files (their #SBATCH directives and command-line flags), or SPEC.yaml:VARIANT for one resolved
    variant of a sweep spec.
    """
    # the readers load when the command runs, not for --help
    from sweepgen.readers import diff as semantic

    old, new = _load(a, resolve_bases), _load(b, resolve_bases)
    globs = semantic.parse_globs(allow)
    for glob, close in semantic.unmatched_globs(allow, old, new).items():
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        click.echo(f"warning: --allow {glob!r} matches no path in either config{hint}", err=True)
    changes = semantic.diff(old, new)
    refused = {change.path for change in semantic.disallowed(changes, globs)}
    if fmt == "json":
        click.echo(json.dumps(_report(a, b, allow, changes, refused), indent=2, sort_keys=True))
    else:
        _print_text(changes, refused, gated=bool(allow))
    return 1 if refused else 0


def _load(ref: str, resolve_bases: bool) -> object:
    """A config file through the readers, or ``SPEC.yaml:VARIANT`` through the compile API."""

    # the readers load when the command runs, not for --help
    from sweepgen.readers.configfile import load_config

    spec, sep, variant = ref.rpartition(":")
    if (
        not Path(ref).exists()
        and sep
        and variant
        and Path(spec).suffix in (".yaml", ".yml")
        and Path(spec).is_file()
    ):
        # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
        from sweepgen.compile.api import resolve_variant

        return resolve_variant(spec, variant)
    return load_config(ref, resolve_bases=resolve_bases)


def _report(a, b, allow, changes, refused) -> dict:
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


def _print_text(changes, refused, *, gated: bool) -> None:
    if not changes:
        click.echo("no differences")
        return
    for change in changes:
        line = (
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


def _show(value, type_name, change) -> str:
    # the readers load when the command runs, not for --help
    from sweepgen.readers.diff import ABSENT

    if value is ABSENT:
        return "<absent>"
    text = repr(value)
    # name the types when they are what changed, so 1 -> 1.0 is not a puzzle
    if change.kind == "type_changed":
        text += f" ({type_name})"
    return text
