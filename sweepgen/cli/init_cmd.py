"""``sweepgen init --from CONFIG [--schema MODULE:CLASS]``: a starting spec and template."""

from __future__ import annotations

import os

import click

from sweepgen.cli import EXIT_OK
from sweepgen.cli._console import info
from sweepgen.cli._params import limit_option, output_root_option


@click.command()
@click.option(
    "--from",
    "config",
    required=True,
    type=click.Path(dir_okay=False),
    help="an existing YAML, JSON or TOML trainer config",
)
@click.option(
    "--schema",
    "schema_ref",
    metavar="MODULE:CLASS",
    help="a dataclass or pydantic config class (e.g. trl:GRPOConfig): exported to schemas/ and named "
    "as the spec's schema, so `check` validates without importing it",
)
@click.option("--name", default=None, help="the sweep's name (default: the config file's name)")
@click.option("--specs-dir", default="specs", show_default=True, type=click.Path(file_okay=False))
@click.option("--templates-dir", default="templates", show_default=True, type=click.Path(file_okay=False))
@output_root_option("output root the new spec renders into")
@limit_option
def init(
    config: str, schema_ref: str | None, name: str | None, specs_dir: str, templates_dir: str, out_root: str
) -> int:
    """Write a starting spec and template from an existing config: a first seed axis, one run
    folder per run, and (with --schema) the config class exported as a JSON Schema file. Nothing is
    overwritten; nothing is written if the new spec does not render."""
    # the compiler loads when the command runs, not for --help
    from sweepgen.compile import api

    sweep = name or os.path.splitext(os.path.basename(config))[0].replace(".", "_")
    written = api.init_project(
        config,
        name=sweep,
        schema_ref=schema_ref,
        specs_dir=specs_dir,
        templates_dir=templates_dir,
        out_root=out_root,
    )
    for path in written:
        info(f"wrote {path}")
    spec = next(p for p in written if p.startswith(specs_dir))
    info(f"next: edit {spec}, then `sweepgen render {spec}` and `sweepgen check`")
    return EXIT_OK
