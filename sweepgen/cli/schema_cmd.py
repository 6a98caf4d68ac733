"""``sweepgen schema [--export MODULE:CLASS -o FILE]``: JSON Schema of the spec format, for editor
completion; or of a config class, as a file CI validates against without importing the class."""

from __future__ import annotations

import click

from sweepgen.cli import EXIT_OK
from sweepgen.cli._console import info


@click.command()
@click.option(
    "--export",
    "ref",
    metavar="MODULE:CLASS",
    help="write the JSON Schema of this dataclass or pydantic model (e.g. trl:GRPOConfig) instead",
)
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(dir_okay=False, writable=True),
    help="write to this file (default: standard output)",
)
def schema(ref: str | None, out: str | None) -> int:
    """Print the JSON Schema of the spec format (e.g. > spec.schema.json for your editor).

    With --export MODULE:CLASS, the schema of a config class instead (field help as descriptions,
    Literal and documented choices as enums, defaults), stamped with its package and version: commit
    it and write `schema: schemas/grpo.json` in the spec, so checking needs no import of the class.
    """
    # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
    from sweepgen.compile import api

    text = api.schema_document(ref, out)
    if out is None:
        click.echo(text, nl=False)
    else:
        info(f"wrote {out} (JSON Schema of {ref or 'the spec format'})")
    return EXIT_OK
