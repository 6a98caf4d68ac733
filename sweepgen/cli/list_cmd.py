"""``sweepgen list SPEC``: the variant matrix, one row per variant, one column per varying path.

A search spec's variants are its trials so far (from the sweep's lock); each row also gets the
trial's state and value from the study, and the title says the search's counts."""

from __future__ import annotations

import click

from sweepgen.cli import EXIT_OK
from sweepgen.cli._params import limit_option, output_root_option
from sweepgen.cli._table import emit, format_option


@click.command("list")
@click.argument("spec", type=click.Path(dir_okay=False))
@output_root_option("output root a search's sweep folder (its trials) is read from")
@format_option()
@limit_option
def list_variants(spec: str, out_root: str, fmt: str) -> int:
    """Show the variants SPEC expands to and the values that differ between them.

    Sampled values (`sample:`) show in full here and in the lock; variant names carry them rounded.
    A search's variants are its trials so far, with their state and value from the study.
    """
    # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
    from sweepgen.run.sweep.start import list_matrix

    table = list_matrix(spec, out_root)
    emit(table.title, table.columns, table.rows, fmt, json_doc=table.doc)
    return EXIT_OK
