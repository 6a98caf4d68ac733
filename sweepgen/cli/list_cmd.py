"""``sweepgen list SPEC``: the variant matrix, one row per variant, one column per varying path."""

from __future__ import annotations

import click

from sweepgen import paths
from sweepgen.cli import EXIT_OK
from sweepgen.cli._table import emit, format_option


@click.command("list")
@click.argument("spec", type=click.Path(dir_okay=False))
@format_option()
def list_variants(spec: str, fmt: str) -> int:
    """Show the variants SPEC expands to and the values that differ between them.

    Sampled values (`sample:`) show in full here and in the lock; variant names carry them rounded.
    """
    # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
    from sweepgen.compile import api

    expansion, varying = api.matrix(spec)
    values = [
        {p: val for p in varying if (val := paths.get(v.config, p)) is not paths.MISSING}
        for v in expansion.variants
    ]
    rows = [[v.name] + [vals.get(p) for p in varying] for v, vals in zip(expansion.variants, values)]
    doc = {
        "varying": varying,
        "variants": [{"name": v.name, "values": vals} for v, vals in zip(expansion.variants, values)],
    }
    emit(f"{expansion.spec.path}: {len(rows)} variant(s)", ["variant", *varying], rows, fmt, json_doc=doc)
    return EXIT_OK
