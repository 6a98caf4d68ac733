"""``sweepgen init --from CONFIG [--grid PATH=V1,V2 ...] [--seeds N] [--schema REF]``: a starting spec and
template, rendered, and the command that runs it."""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING

import click

from sweepgen.cli import EXIT_OK
from sweepgen.cli._console import info
from sweepgen.cli._params import limit_option, output_root_option
from sweepgen.run.logs.hf_logging import writes_no_metrics

if TYPE_CHECKING:
    from sweepgen.run.core.base import RunTask


@click.command()
@click.option(
    "--from",
    "config",
    required=True,
    type=click.Path(dir_okay=False),
    help="an existing YAML, JSON or TOML trainer config, or a Python file calling GRPOConfig(...) "
    "(its literal arguments, read without running it)",
)
@click.option(
    "--schema",
    "schema_ref",
    metavar="MODULE:CLASS",
    help="a dataclass or pydantic config class (e.g. trl:GRPOConfig): exported to schemas/ and named "
    "as the spec's schema, so `check` validates without importing it",
)
@click.option(
    "--grid",
    "grid",
    multiple=True,
    metavar="PATH=V1,V2",
    help="a grid axis over a key the config sets (repeatable), e.g. --grid beta=0,0.04",
)
@click.option("--seeds", type=click.IntRange(min=1), default=None, help="N seeds per point, the last axis")
@click.option("--name", default=None, help="the sweep's name (default: the config file's name)")
@click.option("--specs-dir", default="specs", show_default=True, type=click.Path(file_okay=False))
@click.option("--templates-dir", default="templates", show_default=True, type=click.Path(file_okay=False))
@output_root_option("output root the new spec renders into")
@limit_option
def init(
    config: str,
    schema_ref: str | None,
    grid: tuple[str, ...],
    seeds: int | None,
    name: str | None,
    specs_dir: str,
    templates_dir: str,
    out_root: str,
) -> int:
    """Write a starting spec and template from an existing config (a grid from --grid and --seeds,
    else a first seed axis; one run folder per run; with --schema the schema exported as a JSON
    Schema file), render it, and print the command that runs it. Nothing is overwritten; nothing is
    written if the new spec does not render.

    \b
      sweepgen init --from configs/grpo.yaml --grid beta=0,0.04 --grid loss_type=grpo,dr_grpo \\
        --seeds 3 --schema trl:grpo
    """
    # the compiler loads when the command runs, not for --help
    from sweepgen.compile import api

    sweep = name or os.path.splitext(os.path.basename(config))[0].replace(".", "_")
    api.check_sweep_name(sweep, given=name is not None, config=config)
    written = api.init_project(
        config,
        name=sweep,
        schema_ref=schema_ref,
        specs_dir=specs_dir,
        templates_dir=templates_dir,
        out_root=out_root,
        grid=grid,
        seeds=seeds,
    )
    for path in written:
        info(f"wrote {path}")
    folder = f"{out_root.rstrip('/')}/{sweep}"
    info(f"rendered {folder}/ (edit the spec, then `sweepgen render` again)")
    command = api.run_command_hint(schema_ref)
    tasks = _rendered_tasks(folder)
    _notes(tasks, grid, seeds)
    if command is None and not _bundled_trainer_configs(tasks):
        command = _trl_command(tasks, specs_dir, sweep, config) or "YOUR-TRAINER {config}"
    info(f"next: sweepgen run {folder}" + (f" --command {shlex.quote(command)}" if command else ""))
    return EXIT_OK


def _trl_command(tasks: list[RunTask] | None, specs_dir: str, sweep: str, config: str) -> str | None:
    """The ``trl`` command a config given without ``--schema`` is written for (a Python file's: its
    call's class), said with the schema that checks it as TRL parses it; None (said: give
    --command) when it reads as no TRL command's."""
    from sweepgen.compile import api

    called = api.trl_command_of_python(config)
    spec = os.path.join(specs_dir, f"{sweep}.yaml")
    if called is not None:  # the class the file's call builds: known, not guessed from the keys
        _schema_note(f"{os.path.basename(config)} builds a `trl {called}` config.", called, spec)
        return f"trl {called} --config {{config}}"
    named = os.path.basename(config).lower()
    commands, keys = api.trl_commands_for(tasks[0].config, named) if tasks else ([], [])
    if not commands:
        # a plain `run` starts the bundled trainer, which refuses it
        info("this config is not the bundled trainer's: say how your trainer runs a config with --command")
        return None
    others = "`, `trl ".join(commands[1:])
    also = f" (or `trl {others}`, whose keys it fits as well;" if others else " ("
    read_as = f"this reads as a `trl {commands[0]}` config{also} its own keys: {', '.join(keys)})."
    _schema_note(read_as, commands[0], spec)
    return f"trl {commands[0]} --config {{config}}"


def _schema_note(why: str, command: str, spec: str) -> None:
    """The schema to add so that `check` and `render` refuse what ``trl COMMAND`` would."""
    info(
        f"note: {why} Add `schema: trl:{command}` to {spec} (or run init with --schema trl:{command}) "
        f"so that `check` and `render` refuse what `trl {command} --config` would"
    )


def _notes(tasks: list[RunTask] | None, grid: tuple[str, ...], seeds: int | None) -> None:
    """What the person should know before running the sweep just rendered."""
    if tasks and all(writes_no_metrics(task.config) for task in tasks):
        info(
            'note: these configs keep no metrics file (`save_strategy: "no"`, no `report_to`): the '
            "trainer only prints its metrics and `sweepgen report` will find nothing; set `report_to: "
            "tensorboard` (or `wandb`, offline too) in the config"
        )
    if grid and seeds is None and not any(_is_seed_axis(axis) for axis in grid):
        info(
            "note: one run per grid point, no seeds: `sweepgen report` can compare them with no "
            "uncertainty and says no verdict is possible; add --seeds 3 for intervals over seeds"
        )


def _is_seed_axis(axis: str) -> bool:
    """``--grid seed=1,2,3`` (or ``training.seed=...``): an axis over the seed itself."""
    return axis.partition("=")[0].strip().rpartition(".")[2] == "seed"


def _rendered_tasks(folder: str) -> list[RunTask] | None:
    """The runs of the sweep just rendered; None when `run` would refuse it (not for init to say)."""
    from pathlib import Path

    from sweepgen.errors import UserError
    from sweepgen.run.core.plan.tasks import load_sweep

    try:
        return load_sweep(Path(folder)).tasks
    except UserError:
        return None


def _bundled_trainer_configs(tasks: list[RunTask] | None) -> bool:
    """Whether the configs just rendered are the bundled trainer's (its sections only)."""
    from sweepgen.errors import UserError
    from sweepgen.run.core.plan.tasks import check_bundled_configs

    if tasks is None:
        return True
    try:
        check_bundled_configs(tasks)
    except UserError:
        return False
    return True
