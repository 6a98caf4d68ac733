"""``sweepgen list SPEC``: the variant matrix, one row per variant, one column per varying path."""

from __future__ import annotations

import json

import click

from sweepgen.cli import EXIT_OK


@click.command("list")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_variants(spec: str, fmt: str) -> int:
    """Show the variants SPEC expands to and the values that differ between them."""
    from sweepgen import paths
    from sweepgen.compile import api

    expansion, varying = api.matrix(spec)
    rows = [[v.name] + [_cell(paths.get(v.config, p)) for p in varying] for v in expansion.variants]
    if fmt == "json":
        click.echo(
            json.dumps(
                {
                    "varying": varying,
                    "variants": [
                        {
                            "name": v.name,
                            "values": {
                                p: val
                                for p in varying
                                if (val := paths.get(v.config, p)) is not paths.MISSING
                            },
                        }
                        for v in expansion.variants
                    ],
                },
                indent=2,
            )
        )
        return EXIT_OK
    from rich.markup import escape
    from rich.table import Table

    from sweepgen.cli._console import stdout

    # Every cell, header and the title are escaped: config values are data, not rich markup
    # ("[/INST]" would crash the table, "[bold]x" would lose its brackets).
    # Control characters and line breaks too: a value with ESC sequences must not reach the terminal.
    from sweepgen.escape import line

    table = Table(title=escape(line(f"{expansion.spec.path}: {len(rows)} variant(s)")))
    table.add_column("variant")
    for p in varying:
        table.add_column(escape(line(p)))
    for row in rows:
        table.add_row(*(escape(line(cell)) for cell in row))
    stdout().print(table)
    return EXIT_OK


def _cell(value) -> str:
    from sweepgen import paths

    if value is paths.MISSING:
        return "-"
    return json.dumps(value) if not isinstance(value, str) else value
