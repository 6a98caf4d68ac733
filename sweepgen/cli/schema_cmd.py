"""``sweepgen schema``: JSON Schema of the spec format, for editor completion."""

from __future__ import annotations

import json

import click

from sweepgen.cli import EXIT_OK


@click.command()
def schema() -> int:
    """Print the JSON Schema of the spec format (e.g. > spec.schema.json for your editor)."""
    # the compiler (pydantic, jinja2: ~0.15 s) loads when the command runs, not for --help
    from sweepgen.compile import api

    click.echo(json.dumps(api.spec_json_schema(), indent=2, sort_keys=True))
    return EXIT_OK
