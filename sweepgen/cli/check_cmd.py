"""``sweepgen check [SPEC…] [--format text|json|github]``: the CI lint for specs and generated files."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from sweepgen.cli import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, _no_import
from sweepgen.cli._console import info, safe_text, verbose
from sweepgen.cli._params import limit_option, output_root_option
from sweepgen.escape import line, lines

if TYPE_CHECKING:  # the compiler loads when the command runs, not for --help
    from sweepgen.compile.check.committed import Problem, Report
    from sweepgen.errors import Location


@click.command()
@click.argument("specs", nargs=-1, type=click.Path(dir_okay=False))
@output_root_option("output root the generated files live under")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="github prints workflow annotations (::error file=…,line=…::…)",
)
@click.option(
    "--full",
    is_flag=True,
    help="render every spec again; by default a spec whose inputs and generated files all still have "
    "the hashes its lock recorded is trusted without rendering",
)
@click.option(
    "--diff",
    "-v",
    "--verbose",
    "show_diff",
    is_flag=True,
    help="also list every file a changed input made stale, and each file's unified diff",
)
@_no_import.option
@limit_option
def check(
    specs: tuple[str, ...], out_root: str, fmt: str, full: bool, show_diff: bool, no_import: bool
) -> int:
    """Check SPECs (default: the specs of [tool.sweepgen] in pyproject.toml, else every YAML under
    specs/ and every *.sweep.yaml): valid, and generated files up to date.

    Exit 0 when all is well, 1 when generated files are stale, edited, missing or orphaned,
    2 when a spec is invalid.
    """
    # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
    from sweepgen.compile import api
    from sweepgen.compile.schema import trl_cli
    from sweepgen.compile.schema import validate as schema

    # a reading command writes nothing: not even the user's cache of trl's schemas (trl_cli)
    with (
        trl_cli.no_cache_writes() as built,
        schema.no_import() if no_import else contextlib.nullcontext() as found,
    ):
        # no SPECs: the project's own (then an orphaned sweep folder is a problem too)
        report = api.check(list(specs) or None, out_root, full=full)
    skipped = found or []  # the schema checks --no-import left out
    note = trl_cli.built_note(built)
    if note is not None:
        click.echo(note, err=True)
    _no_import.report(skipped, fmt)
    _print_report(report, skipped, fmt, show_diff)
    return _exit_code(report)


def _print_report(report: Report, skipped: Sequence[tuple[Location, str]], fmt: str, show_diff: bool) -> None:
    """The report in the --format asked for (json for programs, github for CI annotations)."""
    if fmt == "json":
        click.echo(_json_text(report, skipped))
    elif fmt == "github":
        _print_github(report, show_diff)
    else:
        _print_text(report, show_diff or verbose())


def _exit_code(report: Report) -> int:
    """2 for an invalid spec before 1 for stale files: files of a spec that cannot be read are not
    known to be stale, and CI must tell the two apart."""
    if report.invalid:
        return EXIT_USAGE
    return EXIT_PROBLEMS if report.problems else EXIT_OK


def _json_text(report: Report, skipped: Sequence[tuple[Location, str]]) -> str:
    """The report for programs: the problems and the schema checks --no-import skipped."""
    return json.dumps(
        {
            "ok": not report.problems,
            "specs": report.specs,
            "files": report.files,
            "problems": [p.as_dict() for p in report.problems],
            "skipped_schema_checks": [
                {"path": loc.path, "line": loc.line, "col": loc.col, "schema": ref} for loc, ref in skipped
            ],
        },
        indent=2,
        sort_keys=True,
    )


def _print_github(report: Report, show_diff: bool) -> None:
    """One GitHub Actions error annotation per problem, then the summary."""
    for p in report.problems:
        if p.detail and not show_diff:
            continue
        props = (
            f"file={_prop(p.path)}"
            + (f",line={p.line}" if p.line else "")
            + (f",col={p.col}" if p.col else "")
        )
        props += f",title={_prop(f'sweepgen check: {p.kind}')}"
        text = f"{p.kind}: {p.message}" + (f" (hint: {p.hint})" if p.hint else "")
        click.echo(f"::error {props}::{_data(line(text))}")
    info(_summary(report))


def _summary(report: Report) -> str:
    shown = [p for p in report.problems if not p.detail]  # details are counted in their cause's line
    state = "ok" if not report.problems else f"{len(shown)} problem(s)"
    return f"checked {report.specs} spec(s), {report.files} generated file(s): {state}"


def _print_text(report: Report, show_diff: bool) -> None:
    for p in report.problems:
        if p.detail and not show_diff:
            continue
        level = "error" if p.kind == "invalid" else p.kind
        # Paths, messages and diffs hold user data: escape control characters and line breaks
        # so no line of ours can start with `::error` (a GitHub workflow command) or move the cursor.
        click.echo(safe_text(f"{line(_where(p))}: {level}: {line(p.message)}"), err=False)
        if p.hint:
            click.echo(f"  hint: {line(p.hint)}")
        if p.diff and show_diff:
            click.echo(lines(p.diff), nl=False)
    info(_summary(report))


def _where(p: Problem) -> str:
    """path, path:line or path:line:col, as far as the problem knows."""
    return p.path + (f":{p.line}" if p.line else "") + (f":{p.col}" if p.col and p.line else "")


def _data(text: str) -> str:
    # GitHub workflow-command escaping
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(line(text)).replace(":", "%3A").replace(",", "%2C")
