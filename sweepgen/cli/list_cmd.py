"""``sweepgen list SPEC``: the variant matrix, one row per variant, one column per varying path.

A search spec's variants are its trials so far (from the sweep's lock); each row also gets the
trial's state and value from the study, and the title says the search's counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    A search's variants are its trials so far, with their state and value from the study.
    """
    # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
    from sweepgen.compile import api, search

    expansion, varying = api.matrix(spec)
    values = [
        {p: val for p in varying if (val := paths.get(v.config, p)) is not paths.MISSING}
        for v in expansion.variants
    ]
    rows = [[v.name] + [vals.get(p) for p in varying] for v, vals in zip(expansion.variants, values)]
    doc: dict[str, Any] = {
        "varying": varying,
        "variants": [{"name": v.name, "values": vals} for v, vals in zip(expansion.variants, values)],
    }
    title = f"{expansion.spec.path}: {len(rows)} variant(s)"
    columns = ["variant", *varying]
    if search.is_search(expansion.spec):
        block = search.block(expansion.spec)
        trials = _trials(Path("generated") / expansion.spec.name, block)
        title = f"{expansion.spec.path}: {len(rows)} trial run(s) rendered; " + trials.pop("", "")
        columns += ["state", block.metric]
        for row, variant in zip(rows, doc["variants"]):
            state, value = trials.get(str(row[0]).partition("_r")[0], ("not in the study", None))
            row += [state, value]
            variant.update(state=state, value=value)
    emit(title, columns, rows, fmt, json_doc=doc)
    return EXIT_OK


def _trials(sweep_dir: Path, block: Any) -> dict[str, Any]:
    """Trial name -> (state, value) from the study, and under "" the search's one-line counts. A
    pruned trial shows the step it was stopped at and no value: its last reported value is no result."""
    from sweepgen.run import search_view

    view = search_view.load(sweep_dir, block)
    found: dict[str, Any] = {
        r.name: (f"pruned at step {r.steps}" if r.steps else "pruned", None)
        if r.state == "pruned"
        else (r.state, r.value)
        for r in view.rows
    }
    found[""] = view.lines()[0]
    return found
