"""``sweepgen render SPEC… [-o DIR] [--dry-run]``: compile specs and write their files atomically."""

from __future__ import annotations

import click

from sweepgen.cli import EXIT_OK
from sweepgen.cli._console import stdout


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
def render(specs: tuple[str, ...], out_root: str, dry_run: bool) -> int:
    """Expand, validate and render SPECs; all or nothing, plus sweep.lock.json per sweep."""
    # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
    from sweepgen.compile import api

    outcomes = api.render(list(specs), out_root, dry_run=dry_run)
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.markup import (
        escape,  # paths, variant and run names are data, never rich markup
    )

    console = stdout()
    if dry_run:
        # rich (~20 ms) loads only when there is something to print, not for --help
        from rich.table import Table

        for out in outcomes:
            table = Table(
                title=escape(f"{out.plan.spec.path} -> {out.plan.shown_dir}/ (dry run: nothing written)")
            )
            for column in ("file", "variant", "run name", "action"):
                table.add_column(column)
            for act in out.actions:
                table.add_row(
                    *(escape(cell) for cell in (act.path, act.variant or "", act.run_name or "", act.action))
                )
            table.add_row("sweep.lock.json", "", "", "update" if out.lock_changed else "unchanged")
            console.print(table)
        return EXIT_OK
    for out in outcomes:
        console.print(
            escape(
                f"{out.plan.spec.path}: {len(out.plan.files)} file(s) in {out.plan.shown_dir}/ "
                f"({out.count('create')} created, {out.count('update')} updated, "
                f"{out.count('unchanged')} unchanged, "
                f"{out.count('remove')} removed)"
            )
        )
    return EXIT_OK
