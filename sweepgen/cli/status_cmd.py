"""`sweepgen status DIR` and `sweepgen cancel DIR`: look at and stop a sweep's runs from any shell.

Everything comes from the run directories (status files, summary.json, logs) and, for runs on
Slurm, from squeue/sacct through the job ids recorded at submission. Exit codes: 0 no run failed or
was cancelled; 1 some did (their state and log tail are shown); 2 bad input.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sweepgen.cli import _console
from sweepgen.cli._table import emit, format_option

if TYPE_CHECKING:  # annotations only: sweepgen.run and rich load when a command runs
    from rich.table import Table

    from sweepgen.run.base import RunTask
    from sweepgen.run.run_view import RunView

FOLLOW_POLL_S = 2.0
STYLE = {
    "FINISHED": "green",
    "RUNNING": "cyan",
    "PENDING": "dim",
    "NOT STARTED": "dim",
    "CANCELLED": "yellow",
}


@click.command("status")
@click.argument("sweep_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--only",
    multiple=True,
    metavar="NAME",
    help="Only these runs (run or variant name; repeat or comma-separate).",
)
@format_option()
@click.option(
    "--wait", is_flag=True, help="Follow the runs with a live table until none is queued or running."
)
@click.option(
    "--tail",
    "tail_lines",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Log lines shown for each failed or cancelled run.",
)
def status(sweep_dir: Path, only: tuple[str, ...], fmt: str, wait: bool, tail_lines: int) -> int:
    """Show the state of every run of the sweep in DIR (the folder holding sweep.lock.json).

    Run it from the directory `sweepgen run` was started in (run directories are relative to it).
    Failed, timed-out and cancelled runs are listed with the last lines of their log.
    """
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.sweep_status import collect

    tasks = _tasks(sweep_dir, only)
    views = collect(tasks)
    if wait and fmt == "text":
        views = _follow(tasks, views)
    elif wait:
        while any(v.live for v in views):
            time.sleep(FOLLOW_POLL_S)
            views = collect(tasks)
    for note in dict.fromkeys(v.note for v in views if v.note):  # e.g. sacct down: what is not known
        _console.stderr().print(f"warning: {note}", markup=False, highlight=False)
    if fmt == "json":
        click.echo(json.dumps([_as_json(v, tail_lines) for v in views], indent=2, sort_keys=True))
    elif fmt == "csv":  # one row per run; the log tail stays in text and json
        rows = [{k: v for k, v in _as_json(v, 0).items() if k != "log_tail"} for v in views]
        columns = list(rows[0]) if rows else ["run", "state"]
        emit("", columns, [[row.get(c) for c in columns] for row in rows], "csv")
    else:
        _console.stdout().print(_table(views, title=f"{sweep_dir}"))
        _search_summary(sweep_dir)
        _show_problems(views, tail_lines)
    return _exit_code(views)


@click.command("cancel")
@click.argument("sweep_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--only",
    multiple=True,
    metavar="NAME",
    help="Only these runs (run or variant name; repeat or comma-separate).",
)
def cancel(sweep_dir: Path, only: tuple[str, ...]) -> int:
    """Cancel the queued and running Slurm jobs of the sweep in DIR; return once Slurm has ended them.

    Cancelled runs keep their checkpoints and are resumed by `sweepgen run DIR --rerun-failed`.
    Runs of the local executor are stopped with Ctrl-C in the terminal that runs them.
    """
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.slurm import cancel_runs
    from sweepgen.run.sweep_status import collect

    tasks = _tasks(sweep_dir, only)
    views = collect(tasks)
    on_slurm = [v.task for v in views if v.live and v.status and v.status.executor == "slurm"]
    elsewhere = [v for v in views if v.live and v.status and v.status.executor != "slurm"]
    out, err = _console.stdout(), _console.stderr()
    if not on_slurm and not elsewhere:
        out.print(f"nothing to cancel: no run of {sweep_dir} is queued or running")
        return 0
    if on_slurm:
        cancelled = {v.task.name: v for v in cancel_runs(on_slurm)}
        views = [cancelled.get(v.task.name, v) for v in views]
        from sweepgen.run import sweep_state

        # the command line the sweep was started with, so the copied hint runs the same trainer
        recorded = sweep_state.read(sweep_dir) or sweep_state.RunOptions()
        resume = replace(recorded, executor="slurm").command_line(sweep_dir, "--rerun-failed")
        out.print(f"cancelled {len(on_slurm)} Slurm run(s); resume them with `{resume}`", markup=False)
    out.print(_table(views, title=str(sweep_dir)))
    for view in elsewhere:
        assert view.status is not None  # a live run has a status
        err.print(
            f"{view.task.name}: runs under the {view.status.executor} executor "
            f"({_job(view)}); stop it with Ctrl-C in the terminal running `sweepgen run`",
            markup=False,
        )
    return 1 if elsewhere else 0


def _tasks(sweep_dir: Path, only: tuple[str, ...]) -> list[RunTask]:
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.tasks import load_sweep, select

    # the command is irrelevant here (nothing is run); a placeholder keeps non-YAML sweeps loadable
    sweep = load_sweep(sweep_dir, command=("{config}",))
    return _located(sweep_dir, select(sweep.tasks, only))


def _located(sweep_dir: Path, tasks: list[RunTask]) -> list[RunTask]:
    """Run directories are relative to where `sweepgen run` was started. From another directory,
    find them under an ancestor of the sweep folder (the project root, usually) and say so; if they
    are nowhere and the sweep folder is outside this directory, say why instead of showing every run
    as never started (exit 2)."""
    from dataclasses import replace

    from sweepgen.errors import UserError

    relative = [t for t in tasks if not t.run_dir.is_absolute()]
    if not relative or any(t.run_dir.exists() for t in tasks):
        return tasks
    for base in Path(sweep_dir).resolve().parents:
        if any((base / t.run_dir).exists() for t in relative):
            _console.stderr().print(
                f"note: run directories found under {base} (they are relative to where `sweepgen run` "
                "was started)",
                markup=False,
                highlight=False,
            )
            return [t if t.run_dir.is_absolute() else replace(t, run_dir=base / t.run_dir) for t in tasks]
    if Path.cwd() not in Path(sweep_dir).resolve().parents:
        raise UserError(
            f"none of the {len(tasks)} run directories of {sweep_dir} exists here ({Path.cwd()}) nor "
            "under any folder above the sweep folder",
            hint="run directories are relative to where `sweepgen run` was started; run `sweepgen "
            "status` from there",
        )
    return tasks


def _follow(tasks: Sequence[RunTask], views: list[RunView]) -> list[RunView]:
    # sweepgen.run loads when the command runs, not for --help
    from rich.live import Live

    from sweepgen.run.sweep_status import collect

    out = _console.stdout()
    with Live(_table(views), console=out, transient=True, auto_refresh=False) as live:
        while any(v.live for v in views):
            time.sleep(FOLLOW_POLL_S)
            views = collect(tasks)
            live.update(_table(views), refresh=True)
    return views


def _table(views: Sequence[RunView], title: str | None = None) -> Table:
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.table import Table

    from sweepgen.cli._run_display import elapsed_seconds, fmt_duration, step_text

    table = Table(title=title, title_justify="left")
    for col in ("run", "state", "executor", "job", "attempt", "elapsed", "step", "reason"):
        table.add_column(col, overflow="fold")
    now = datetime.now(timezone.utc)
    for view in views:
        s = view.status
        label = view.label
        table.add_row(
            view.task.name,
            f"[{STYLE.get(label, 'bold red')}]{label}[/]",
            s.executor if s else "-",
            _job(view) if s else "-",
            str(s.attempt) if s else "-",
            fmt_duration(elapsed_seconds(s, now)),
            step_text(view.task.run_dir, view.task.config),
            view.unreadable or ((s.reason or "") if s else ""),
        )
    return table


def _show_problems(views: Sequence[RunView], tail_lines: int) -> None:
    # sweepgen.run loads when the command runs, not for --help
    from rich.markup import escape

    from sweepgen.run.sweep_status import log_tail, problems

    err = _console.stderr()
    for view in problems(views):
        reason = view.unreadable or (view.status.reason if view.status else None) or "no reason recorded"
        path, lines = log_tail(view, tail_lines)
        err.print(
            f"\n[bold red]── {escape(view.task.name)} {view.label}[/] ({escape(reason)})"
            + (f"; last lines of {path}:" if lines else f"; {path or 'no log'} is empty")
        )
        for line in lines:
            err.print(line, markup=False, highlight=False)


def _as_json(view: RunView, tail_lines: int) -> dict[str, Any]:
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.sweep_status import log_tail

    s = view.status
    data = {
        "run": view.task.name,
        "variant": view.task.variant,
        "state": view.label,
        "run_dir": view.task.run_dir.as_posix(),
        "executor": s.executor if s else None,
        "job_id": s.ids.get("job_id") if s else None,
        "attempt": s.attempt if s else None,
        "reason": view.unreadable or (s.reason if s else None),
        "started": s.started if s else None,
        "ended": s.ended if s else None,
        "exit_code": s.exit_code if s else None,
    }
    if view.problem:
        data["log_tail"] = log_tail(view, tail_lines)[1]
    return data


def _exit_code(views: Sequence[RunView]) -> int:
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.sweep_status import problems

    return 1 if problems(views) else 0


def _job(view: RunView) -> str:
    assert view.status is not None  # called only for a run with a status
    ids = view.status.ids
    if "job_id" in ids:
        return f"job {ids['job_id']}"
    if "pid" in ids:
        return f"pid {ids['pid']} on {ids.get('host', '?')}"
    return "-"


def _search_summary(sweep_dir: Path) -> None:
    """A search sweep: its trials by state (refused points have no run in the table) and the best."""
    from sweepgen.cli.search_run import search_lines

    for line in search_lines(sweep_dir, diff=False):
        _console.stdout().print(line, markup=False, highlight=False)
