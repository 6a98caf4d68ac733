"""The state of every run of a sweep, whichever executor ran it, for `sweepgen status` and `cancel`.

Reads only what is on disk (each run's ``sweepgen_status.json`` and ``summary.json``) plus, for
the runs of an executor with an observer (Slurm: one squeue and one sacct call), what that observer
says, asked through the executor registry; so it works from any shell, any time after `run`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from sweepgen.errors import SweepgenError
from sweepgen.fs import filenames
from sweepgen.fs.confine import resolve_inside
from sweepgen.run.core import registry, runfiles, runlock
from sweepgen.run.core.base import (
    LOG_FILE,
    STATUS_FILE,
    TERMINAL,
    Executor,
    RunState,
    RunStatus,
    RunTask,
    effective_state,
    is_stale,
    known_exit,
    read_status,
    utc_now,
    write_status,
)
from sweepgen.run.core.deadline import within
from sweepgen.run.core.registry import status_is_alive
from sweepgen.run.core.run_view import PROBLEM_STATES, SLURM_WORDS, RunView
from sweepgen.run.logs.progress import log_tail as run_log_tail

__all__ = ["PROBLEM_STATES", "SLURM_WORDS", "RunView", "collect", "log_tail", "problems", "record_observed"]


ANSWER_S = 5.0  # how long `status` waits for an executor's observer before it answers from the files alone


def collect(tasks: Sequence[RunTask], *, answer_s: float = ANSWER_S, persist: bool = True) -> list[RunView]:
    """One view per task, in task order. The runs of an executor with an observer (Slurm) are
    reconciled with it (and, with ``persist``, what only it knows, such as a cancellation, is
    written to their status files); other runs are read as they are, except that a ``running`` run
    whose process is gone is shown as failed (lost).

    Always answers: a status file that cannot be read is that run's view (UNREADABLE, with why), and
    when an observer does not answer within ``answer_s`` its runs are shown as their files say,
    with a note saying so. ``persist`` False (`sweepgen status`, a reading command): a local run
    found lost, or a Slurm job Slurm ended unrecorded, is shown so, and nothing is written (no lock
    file made, no status replaced in a runs folder others may share); `run` records it when it
    plans (``record_observed``), `cancel` as it looks."""
    statuses, views = _read_statuses(tasks)
    for name, observed in _by_executor(tasks, statuses).items():
        views.update(_observed(registry.executor_class(name), observed, statuses, answer_s, persist))
    views.update(_vanished(tasks, statuses, views))
    for task in tasks:
        if task.name not in views:
            views[task.name] = _plain_view(task, statuses[task.name], persist=persist)
    # the same staleness rule as `run` and `report`: a directory made from another config is no result
    return [_mark_stale(views[t.name]) for t in tasks]


def record_observed(tasks: Sequence[RunTask]) -> None:
    """`run`, before it plans: what only an executor's observer knows of these runs (a Slurm job
    cancelled, out of memory, past its time, whose node could not record it) written to their status
    files, since `status` only shows it and Slurm's accounting forgets it. An observer that cannot
    be asked leaves the files as they are (the plan then reads them as they are)."""
    statuses, _ = _read_statuses(tasks)
    for name, observed in _by_executor(tasks, statuses).items():
        executor = registry.executor_class(name)
        if executor.observer is None:
            continue
        try:
            executor.observe(observed, persist=True)
        except SweepgenError:
            continue  # e.g. the controller is down: the plan asks its is_alive as it always did


def _read_statuses(tasks: Sequence[RunTask]) -> tuple[dict[str, RunStatus | None], dict[str, RunView]]:
    """Each run's status file; the view of each whose file cannot be read (UNREADABLE, with why)."""
    statuses: dict[str, RunStatus | None] = {}
    views: dict[str, RunView] = {}
    for task in tasks:
        try:
            statuses[task.name] = read_status(task.run_dir)
        except (SweepgenError, OSError) as err:
            why = err.message if isinstance(err, SweepgenError) else (err.strerror or str(err))
            views[task.name] = RunView(task, None, unreadable=f"{task.run_dir / STATUS_FILE}: {why}")
    return statuses, views


def _by_executor(
    tasks: Sequence[RunTask], statuses: Mapping[str, RunStatus | None]
) -> dict[str, list[RunTask]]:
    """The runs whose status names a known executor, by that executor."""
    by_executor: dict[str, list[RunTask]] = {}
    for task in tasks:
        status = statuses.get(task.name)
        if status is not None and status.executor in registry.EXECUTORS:
            by_executor.setdefault(status.executor, []).append(task)
    return by_executor


def _observed(
    executor: type[Executor],
    tasks: Sequence[RunTask],
    statuses: dict[str, RunStatus | None],
    answer_s: float,
    persist: bool = True,
) -> dict[str, RunView]:
    """The views of ``tasks`` as their executor's observer tells (nothing for an executor without
    one: their files say it all); as their files say, with a note, when it does not answer."""
    if executor.observer is None:
        return {}
    try:
        answered = within(answer_s, lambda: executor.observe(tasks, persist=persist))
        why = f"{executor.observer} did not answer within {answer_s:g} s"
    except SweepgenError as err:  # e.g. the controller is down (scontrol ping)
        answered, why = None, f"{executor.observer} could not be asked ({err.message})"
    if answered is not None:
        return {v.task.name: v for v in answered}
    note = f"{why}: the states of its runs are what their status files say (a job may have ended since)"
    return {task.name: replace(_file_view(task, statuses[task.name]), note=note) for task in tasks}


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
    if state is status.state is RunState.RUNNING:
        return _running_view(task, status)
    if state is None or state is status.state:
        return RunView(task, status)
    # the same rule as `sweepgen run`, e.g. a "running" run whose sweepgen was SIGKILLed has ended:
    # it ended when its files last changed, not when `status` looked; its exit code the trainer's,
    # where its supervisor wrote that before it died
    ended = status.ended or _last_written(task.run_dir)
    new = replace(status, state=state, reason=reason, ended=ended, exit_code=known_exit(status))
    if persist and state in TERMINAL:
        _persist(task, status, new)
    return RunView(task, new)


def _running_view(task: RunTask, status: RunStatus) -> RunView:
    """A running run, with what its executor knows beyond that (its supervisor died while what it
    started runs on)."""
    note = registry.running_note(status)
    return RunView(task, replace(status, reason=note) if note else status)


def _vanished(
    tasks: Sequence[RunTask], statuses: dict[str, RunStatus | None], views: dict[str, RunView]
) -> dict[str, RunView]:
    """Runs without a status file (their directory gone, or made again empty) although an
    executor's own records say it started them (the Slurm jobs journal; a local supervisor that
    still holds the run's deleted lock): as that executor knows them now, never shown as not
    started (a job cannot keep records there)."""
    gone = [t for t in tasks if t.name not in views and statuses.get(t.name) is None]
    out: dict[str, RunView] = {}
    for name in registry.NAMES if gone else ():
        out.update(
            registry.executor_class(name).vanished(tasks, [t for t in gone if t.name not in out], ANSWER_S)
        )
    return out


def _file_view(task: RunTask, status: RunStatus | None) -> RunView:
    """A run as its status file says, when Slurm cannot be asked (never written back)."""
    if status is None:
        return RunView(task, None)
    if not task.run_dir.is_dir():
        return RunView(task, replace(status, reason=f"its run directory {task.run_dir} is gone"))
    return RunView(task, status)


def _last_written(run_dir: Path) -> str:
    """When the run last wrote anything (its log, metrics, status), as ISO-8601 UTC; now if none."""
    times = []
    for name in (LOG_FILE, STATUS_FILE, filenames.METRICS, filenames.METRICS_CSV):
        try:
            times.append(os.stat(run_dir / name).st_mtime)
        except OSError:
            continue
    if not times:
        return utc_now()
    return datetime.fromtimestamp(max(times), timezone.utc).isoformat(timespec="milliseconds")


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
    return status_is_alive(status)


def log_tail(view: RunView, lines: int = 20) -> tuple[Path | None, list[str]]:
    """The last lines of the run's latest attempt in run.log; for a run that died before it wrote
    anything, its executor's own log of it (Slurm: submitit's error log, where Slurm and the wrapper
    report)."""
    tail = run_log_tail(view.task.run_dir, lines=lines)
    if tail or view.status is None or view.status.executor not in registry.EXECUTORS:
        return view.task.run_dir / LOG_FILE, tail
    path = registry.executor_class(view.status.executor).failure_log(view.status)
    if path is None:
        return view.task.run_dir / LOG_FILE, tail
    # the log's folder comes from the status file (data): used only inside the working directory,
    # links resolved, then read as a run file (no link on the way, never a FIFO, its end only)
    if resolve_inside(os.getcwd(), os.path.relpath(os.path.abspath(path))) is None:
        return path, []
    text = runfiles.read_end(path, 65536).decode("utf-8", errors="replace")
    return path, text.splitlines()[-lines:]


def problems(views: Sequence[RunView]) -> list[RunView]:
    return [v for v in views if v.problem]
