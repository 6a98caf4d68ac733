"""`sweepgen status DIR` and `sweepgen cancel DIR`: look at and stop a sweep's runs from any shell.

Everything comes from the run directories (status files, summary.json, logs) and, for runs on
Slurm, from squeue/sacct through the job ids recorded at submission. Exit codes: 0 no run failed or
was cancelled; 1 some did (their state and log tail are shown); 2 bad input.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sweepgen.cli import _console
from sweepgen.cli._params import only_option, read_budget_option, trusting
from sweepgen.cli._table import emit, format_option
from sweepgen.escape import line as one_line

if TYPE_CHECKING:  # annotations only: sweepgen.run and rich load when a command runs
    from rich.console import Console
    from rich.table import Table

    from sweepgen.run.core.base import RunStatus
    from sweepgen.run.core.run_view import RunView
    from sweepgen.run.sweep.watch import CancelOutcome, StatusOutcome

STYLE = {
    "FINISHED": "green",
    "RUNNING": "cyan",
    "PENDING": "dim",
    "NOT STARTED": "dim",
    "CANCELLED": "yellow",
}


@click.command("status")
@click.argument("sweep_dir", metavar="DIR", type=click.Path(path_type=Path))
@only_option()
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
@read_budget_option("status files, trainer states, logs; without --wait, which reads changed files again")
@trusting("sweep_dir")
def status(
    sweep_dir: Path, only: tuple[str, ...], fmt: str, wait: bool, tail_lines: int, max_read_bytes: int
) -> int:
    """Show the state of every run of the sweep in DIR (the folder holding sweep.lock.json).

    Run it from the directory `sweepgen run` was started in (run directories are relative to it).
    Failed, timed-out and cancelled runs are listed with the last lines of their log.
    """
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.core import runfiles

    if wait:  # a follow reads each changed file again, for as long as the runs go
        return _status(sweep_dir, only, fmt, wait, tail_lines)
    with runfiles.read_budget(max_read_bytes):  # one look: what it reads (and shows) bounded together
        return _status(sweep_dir, only, fmt, wait, tail_lines)


def _status(sweep_dir: Path, only: tuple[str, ...], fmt: str, wait: bool, tail_lines: int) -> int:
    from sweepgen.run.sweep.watch import status as sweep_status

    if wait and fmt == "text":
        outcome = _follow(sweep_dir, only)
    else:
        outcome = sweep_status(sweep_dir, only, wait=wait)
    views = outcome.views
    _found_under(outcome.under)
    for note in [*outcome.warnings, *([] if wait else _committed(views))]:  # e.g. sacct down
        _console.stderr().print(f"warning: {note}", markup=False, highlight=False)
    _show_views(sweep_dir, views, fmt, tail_lines)
    return outcome.exit_code


def _show_views(sweep_dir: Path, views: Sequence[RunView], fmt: str, tail_lines: int) -> None:
    """The runs in the format asked for; the text table with a search's lines and the problems."""
    if fmt in ("json", "csv"):
        _show_rows(sweep_dir, views, fmt, tail_lines)
    else:
        _console.stdout().print(_table(views, title=f"{sweep_dir}"))
        _search_summary(sweep_dir, {v.task.name for v in views if v.live})
        _show_problems(views, tail_lines)


def _say_held(outcome: CancelOutcome, out: Console, err: Console) -> None:
    """A search asked to stop, and the runs whose start was under way as cancel asked."""
    if outcome.search_stopped:
        out.print(
            "the search was asked to stop: its `sweepgen run` asks no new trial and leaves the trials "
            f"whose runs are cancelled open; `{outcome.resume}` resumes it",
            markup=False,
        )
    for name in outcome.held_starting:
        out.print(
            f"{name}: its start was still under way (the `sweepgen run` starting it is stopped or slow); "
            "that `run` drops it before its trainer starts (cancelled, never started)",
            markup=False,
        )
    for name in outcome.held_unheard:
        err.print(
            f"{name}: not cancelled: its start was still under way (the search's `sweepgen run` "
            "starting it is stopped or slow); run `sweepgen cancel` again once it runs",
            markup=False,
        )


def _say_nothing_live(sweep_dir: Path, outcome: CancelOutcome, out: Console) -> None:
    """No run of the sweep running: what a live `run` holding some queued does with them."""
    if outcome.queued_unasked:  # said already: a live `run` may start runs of it it has queued
        return
    if outcome.queued_asked:  # a live `run` may hold some queued: none of them starts now
        out.print(
            f"no run of {sweep_dir} is running; a live `sweepgen run` that has runs of it queued "
            "drops them, never starting them (the next `sweepgen run` starts them)",
            markup=False,
        )
    else:
        out.print(f"nothing to cancel: no run of {sweep_dir} is queued or running")


def _committed(views: Sequence[RunView]) -> list[str]:
    """Which runs hold files git tracks, as `report` says it (a pull request's finished status and
    summary are shown as finished, like a run of this machine); a one-shot look asks git once."""
    from sweepgen.run.report import committed

    return committed.warning([(v.task.name, v.task.run_dir) for v in views if v.status is not None])


@click.command("cancel")
@click.argument("sweep_dir", metavar="DIR", type=click.Path(path_type=Path))
@only_option()
@trusting("sweep_dir")
def cancel(sweep_dir: Path, only: tuple[str, ...]) -> int:
    """Cancel the queued and running runs of the sweep in DIR; return once they have ended.

    Works from any shell, whether or not the `sweepgen run` that started them is alive: a local
    run's supervisor gets SIGTERM (the trainer may save a checkpoint; SIGKILL after the stop
    timeout), Slurm jobs are scancelled. A `sweepgen run` still running goes on with the other runs.
    Cancelled runs keep their checkpoints and are resumed by `sweepgen run DIR --rerun-failed`.
    """
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.sweep.watch import cancel as cancel_sweep

    out, err = _console.stdout(), _console.stderr()
    outcome = cancel_sweep(sweep_dir, only, say=lambda line: err.print(line, markup=False, highlight=False))
    _found_under(outcome.under)
    _say_held(outcome, out, err)
    if outcome.nothing_live:
        _say_nothing_live(sweep_dir, outcome, out)
        return outcome.exit_code
    if outcome.cancelled:
        out.print(f"cancelled {outcome.cancelled} run(s); resume them with `{outcome.resume}`", markup=False)
    out.print(_table(outcome.views, title=str(sweep_dir)))
    for view in outcome.ended:
        out.print(_ended_line(view), markup=False)
    for view in outcome.elsewhere:
        err.print(_not_cancelled_line(view), markup=False)
    for view in outcome.restarted:
        err.print(_restarted_line(view, sweep_dir), markup=False)
    return outcome.exit_code


def _restarted_line(view: RunView, sweep_dir: Path) -> str:
    """A run started again (by another `sweepgen run`) after this `cancel` looked at it, while it
    was stopped (SIGSTOP, Ctrl-Z): the new attempt is not the one it was asked to stop."""
    assert view.status is not None  # a live run has a status
    return (
        f"{view.task.name}: started again meanwhile (attempt {view.status.attempt}, {_job(view)}) "
        "after this `cancel` looked at it (it was held up, stopped?): not cancelled; "
        f"`sweepgen cancel {shlex.quote(str(sweep_dir))}` again stops it"
    )


def _ended_line(view: RunView) -> str:
    """A run that ended between the look and the cancel: not cancelled, and not an error either."""
    assert view.status is not None  # (watch._ended_by_itself: a run with a status)
    state = view.status.state.value
    if state == "cancelled":
        # (another `cancel`, a Ctrl-C of its `run`, while this one was held up): not by itself
        return f"{view.task.name}: ended before this `cancel` reached it (cancelled: {view.status.reason})"
    return f"{view.task.name}: ended by itself ({state}) before it could be cancelled"


def _not_cancelled_line(view: RunView) -> str:
    """Why a live run was left running, and what the user can do: a Slurm job is cancelled only
    when provably this run's (a reused job id would cancel a stranger's job)."""
    assert view.status is not None  # a live run has a status
    if view.status.executor == "slurm":
        return (
            f"{view.task.name}: its status file names Slurm job {view.status.ids.get('job_id')}, "
            "which is not provably this run's job (its name, user, submission folder and the "
            "jobs journal must all say so): not cancelled "
            f"(see `squeue -j {view.status.ids.get('job_id')} -o %i|%j|%u|%Z`)"
        )
    return (
        f"{view.task.name}: runs under the {view.status.executor} executor ({_job(view)}) and cannot "
        "be stopped from here: run `sweepgen cancel` on its machine (or, for a run an older "
        "sweepgen started, press Ctrl-C where its `sweepgen run` runs)"
    )


def _found_under(under: Path | None) -> None:
    if under is not None:
        _console.stderr().print(
            f"note: run directories found under {under} (they are relative to where `sweepgen run` "
            "was started)",
            markup=False,
            highlight=False,
        )


def _follow(sweep_dir: Path, only: tuple[str, ...]) -> StatusOutcome:
    """`status --wait` in text: a live table, redrawn with each collection, until no run is live."""
    # rich and sweepgen.run load when the command runs, not for --help
    from rich.live import Live
    from rich.text import Text

    from sweepgen.run.sweep.watch import status as sweep_status

    with Live(Text(""), console=_console.stdout(), transient=True, auto_refresh=False) as live:
        return sweep_status(
            sweep_dir, only, wait=True, show=lambda views: live.update(_table(views), refresh=True)
        )


def _table(views: Sequence[RunView], title: str | None = None) -> Table:
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.table import Table
    from rich.text import Text

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
            Text(label, style=STYLE.get(label, "bold red")),
            *_recorded_cells(view),
            fmt_duration(elapsed_seconds(s, now)),
            step_text(view.task.run_dir, view.task.config, s),
            one_line(view.unreadable or ((s.reason or "") if s else "")),  # one line, whatever the file says
        )
    return table


def _recorded_cells(view: RunView) -> tuple[str, str, str]:
    """executor, job, attempt: what the status file records, dashes before a run has one."""
    s = view.status
    if not s:
        return "-", "-", "-"
    return s.executor, _job(view), str(s.attempt)


def _show_problems(views: Sequence[RunView], tail_lines: int) -> None:
    # sweepgen.run loads when the command runs, not for --help
    from rich.markup import escape

    from sweepgen.run.sweep.status import log_tail, problems

    err = _console.stderr()
    for view in problems(views):
        reason = view.unreadable or (view.status.reason if view.status else None) or "no reason recorded"
        path, lines = log_tail(view, tail_lines)
        err.print(
            f"\n[bold red]── {escape(view.task.name)} {view.label}[/] ({escape(one_line(reason))})"
            + escape(f"; last lines of {path}:" if lines else _no_tail(path)),
            markup=True,
        )
        for line in lines:
            err.print(line, markup=False, highlight=False)


def _no_tail(path: Path | None) -> str:
    """What stands for a log's tail where there is none: the log is empty, or it is never read."""
    from sweepgen.run.core.runfiles import unread_why

    why = unread_why(path) if path is not None else None
    return f"; {path or 'no log'} is empty" if why is None else f"; {path} not shown: it {why}"


def _show_rows(sweep_dir: Path, views: Sequence[RunView], fmt: str, tail_lines: int) -> None:
    """The runs as JSON or CSV rows, with a search journal's cut last line in each (and said)."""
    rows = [_as_json(v, tail_lines if fmt == "json" else 0) for v in views]
    cut = _search_cut(sweep_dir, rows)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2, sort_keys=True))
    else:
        _print_csv(rows)
    if cut is not None:  # said as the table's search lines say it, beside the rows
        _console.stderr().print(cut, markup=False, highlight=False)


def _search_cut(sweep_dir: Path, rows: list[dict[str, Any]]) -> str | None:
    """A search sweep: each row gets ``search_journal_cut_line``, the study journal's cut last line
    (None when it has none), left out of what the study says; the note saying so, when there is one."""
    from sweepgen.run.sweep.start import search_cut_line

    found = search_cut_line(sweep_dir)
    if found is None:
        return None
    for row in rows:
        row["search_journal_cut_line"] = found[0]
    return None if found[0] is None else found[1]


def _print_csv(json_rows: Sequence[dict[str, Any]]) -> None:
    """One row per run; the log tail stays in text and json."""
    rows = [{k: v for k, v in row.items() if k != "log_tail"} for row in json_rows]
    columns = list(rows[0]) if rows else ["run", "state"]
    emit("", columns, [[row.get(c) for c in columns] for row in rows], "csv")


# what a run's status file records, in the order of the json keys and csv columns
_RECORDED = ("executor", "job_id", "attempt", "reason", "started", "ended", "exit_code")


def _recorded(s: RunStatus | None) -> dict[str, Any]:
    """The status file's fields (all None without one)."""
    if s is None:
        return dict.fromkeys(_RECORDED)
    return {
        "executor": s.executor,
        "job_id": s.ids.get("job_id"),
        "attempt": s.attempt,
        "reason": s.reason,
        "started": s.started,
        "ended": s.ended,
        "exit_code": s.exit_code,
    }


def _as_json(view: RunView, tail_lines: int) -> dict[str, Any]:
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.sweep.status import log_tail

    data = {
        "run": view.task.name,
        "variant": view.task.variant,
        "state": view.label,
        "run_dir": view.task.run_dir.as_posix(),
        **_recorded(view.status),
    }
    if view.unreadable:  # why the status file could not be read, in the reason's place
        data["reason"] = view.unreadable
    if view.problem:
        path, lines = log_tail(view, tail_lines)
        data["log_tail"] = lines
        # why the tail is empty (the log is empty, or refused: a link, a FIFO...), as the text says
        data["log_tail_note"] = None if lines else _no_tail(path).removeprefix("; ")
    return data


def _job(view: RunView) -> str:
    assert view.status is not None  # called only for a run with a status
    ids = view.status.ids
    if "job_id" in ids:
        return f"job {ids['job_id']}"
    if "pid" in ids:
        return f"pid {ids['pid']} on {ids.get('host', '?')}"
    return "-"


def _search_summary(sweep_dir: Path, live: set[str]) -> None:
    """A search sweep: its trials by state (refused points have no run in the table) and the best;
    ``live``: the runs queued or running (a trial none of whose runs is, undriven, is not running)."""
    from sweepgen.run.sweep.start import search_lines

    for line in search_lines(sweep_dir, diff=False, live=live):
        _console.stdout().print(line, markup=False, highlight=False)
