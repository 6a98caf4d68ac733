"""``sweepgen render SPEC… [-o DIR] [--dry-run]``: compile specs and write their files atomically."""

from __future__ import annotations

import click

from sweepgen.cli import EXIT_OK, _no_import
from sweepgen.escape import line


@click.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    "out_root",
    default="generated",
    show_default=True,
    type=click.Path(file_okay=False),
    help="output root; each sweep goes to <DIR>/<name>/",
)
@click.option("--dry-run", is_flag=True, help="show the plan table; write nothing")
@_no_import.option
def render(specs: tuple[str, ...], out_root: str, dry_run: bool, no_import: bool) -> int:
    """Expand, validate and render SPECs; all or nothing, plus sweep.lock.json per sweep."""
    import contextlib

    from sweepgen.cli._console import stdout
    from sweepgen.compile import api, schema

    with schema.no_import() if no_import else contextlib.nullcontext() as skipped:
        outcomes = api.render(list(specs), out_root, dry_run=dry_run)
    _no_import.report(skipped or [])
    from rich.markup import (
        escape,  # paths, variant and run names are data, never rich markup
    )

    console = stdout()
    if dry_run:
        from rich.table import Table

        for out in outcomes:
            table = Table(
                title=escape(
                    line(f"{out.plan.spec.path} -> {out.plan.shown_dir}/ (dry run: nothing written)")
                )
            )
            for column in ("file", "variant", "run name", "action"):
                table.add_column(column)
            for act in out.actions:
                table.add_row(
                    *(
                        escape(line(cell))
                        for cell in (act.path, act.variant or "", act.run_name or "", act.action)
                    )
                )
            table.add_row("sweep.lock.json", "", "", "update" if out.lock_changed else "unchanged")
            console.print(table)
        return EXIT_OK
    for out in outcomes:
        console.print(
            escape(
                line(
                    f"{out.plan.spec.path}: {len(out.plan.files)} file(s) in {out.plan.shown_dir}/ "
                    f"({out.count('create')} created, {out.count('update')} updated, "
                    f"{out.count('unchanged')} unchanged, {out.count('remove')} removed)"
                )
            )
        )
    return EXIT_OK
