"""The state of every run of a sweep, whichever executor ran it, for `sweepgen status` and `cancel`.

Reads only what is on disk (each run's ``sweepgen_status.json`` and ``summary.json``) plus, for
runs on Slurm, one squeue and one sacct call; so it works from any shell, any time after `run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from sweepgen.run import runlock
from sweepgen.run.base import (
    LOG_FILE,
    TERMINAL,
    RunStatus,
    RunTask,
    effective_state,
    is_stale,
    read_status,
    utc_now,
    write_status,
)
from sweepgen.run.run_view import PROBLEM_STATES, SLURM_WORDS, RunView

__all__ = ["PROBLEM_STATES", "SLURM_WORDS", "RunView", "collect", "log_tail", "problems"]


def collect(tasks: Sequence[RunTask]) -> list[RunView]:
    """One view per task, in task order. Slurm runs are reconciled with Slurm (and what only Slurm
    knows, such as a cancellation, is written to their status files); other runs are read as they
    are, except that a ``running`` run whose process is gone is shown as failed (lost)."""
    statuses = {t.name: read_status(t.run_dir) for t in tasks}
    slurm_tasks = [t for t in tasks if (s := statuses[t.name]) and s.executor == "slurm"]
    views: dict[str, RunView] = {}
    if slurm_tasks:
        from sweepgen.run.slurm import observe

        views.update({v.task.name: v for v in observe(slurm_tasks)})
    for task in tasks:
        if task.name not in views:
            views[task.name] = _plain_view(task, statuses[task.name])
    # the same staleness rule as `run` and `report`: a directory made from another config is no result
    return [_mark_stale(views[t.name]) for t in tasks]


def _mark_stale(view: RunView) -> RunView:
    if not is_stale(view.task, view.status):
        return view
    reason = "made from another version of its config; `run` and `report` refuse it"
    status = replace(view.status, reason=reason) if view.status else None
    return replace(view, status=status, stale=True)


def _plain_view(task: RunTask, status: RunStatus | None, *, persist: bool = True) -> RunView:
    if status is None:
        return RunView(task, None)
    state, reason = effective_state(task.run_dir, status, _status_is_alive)
    if state is None or state is status.state:
        return RunView(task, status)
    # the same rule as `sweepgen run`, e.g. a "running" run whose sweepgen was SIGKILLed has ended
    new = replace(status, state=state, reason=reason, ended=status.ended or utc_now())
    if persist and state in TERMINAL:
        _persist(task, status, new)
    return RunView(task, new)


def _persist(task: RunTask, seen: RunStatus, new: RunStatus) -> None:
    """Write what `status` learned, but only as the run's lock holder and only over the status it
    read: a run that another process started meanwhile is left to that process."""
    try:
        fd = runlock.acquire(task.run_dir, retry_s=0)
    except OSError:
        return  # a read-only run directory: shown, not written
    if fd is None:
        return
    try:
        if read_status(task.run_dir) == seen:
            write_status(task.run_dir, new)
    except OSError:
        pass  # showing the state matters more than keeping it; `run` applies the same rule again
    finally:
        runlock.release(fd)


def _status_is_alive(status: RunStatus) -> bool:
    from sweepgen.run.registry import status_is_alive

    return status_is_alive(status)


def log_tail(view: RunView, lines: int = 20) -> tuple[Path | None, list[str]]:
    """The last lines of the run's latest attempt in run.log; for a Slurm job that died before the
    run wrote anything, submitit's error log (where Slurm and the wrapper report)."""
    from sweepgen.run.progress import log_tail as run_log_tail

    tail = run_log_tail(view.task.run_dir, lines=lines)
    if tail or view.status is None or view.status.executor != "slurm":
        return view.task.run_dir / LOG_FILE, tail
    from sweepgen.run.slurm import submitit_log

    path = submitit_log(view.status)
    if path is None or not path.is_file():
        return path, []
    return path, path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]


def problems(views: Sequence[RunView]) -> list[RunView]:
    return [v for v in views if v.problem]
