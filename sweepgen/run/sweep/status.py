"""The state of every run of a sweep, whichever executor ran it, for `sweepgen status` and `cancel`.

Reads only what is on disk (each run's ``sweepgen_status.json`` and ``summary.json``) plus, for
runs on Slurm, one squeue and one sacct call; so it works from any shell, any time after `run`.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar, cast

from sweepgen.errors import SweepgenError
from sweepgen.run.core import runlock
from sweepgen.run.core.base import (
    LOG_FILE,
    STATUS_FILE,
    TERMINAL,
    RunState,
    RunStatus,
    RunTask,
    effective_state,
    is_stale,
    read_status,
    utc_now,
    write_status,
)
from sweepgen.run.core.progress import log_tail as run_log_tail
from sweepgen.run.core.registry import status_is_alive
from sweepgen.run.core.run_view import PROBLEM_STATES, SLURM_WORDS, RunView

__all__ = ["PROBLEM_STATES", "SLURM_WORDS", "RunView", "collect", "log_tail", "problems"]


_T = TypeVar("_T")
SLURM_ANSWER_S = 5.0  # how long `status` waits for Slurm before it answers from the files alone


def collect(tasks: Sequence[RunTask], *, slurm_answer_s: float = SLURM_ANSWER_S) -> list[RunView]:
    """One view per task, in task order. Slurm runs are reconciled with Slurm (and what only Slurm
    knows, such as a cancellation, is written to their status files); other runs are read as they
    are, except that a ``running`` run whose process is gone is shown as failed (lost).

    Always answers: a status file that cannot be read is that run's view (UNREADABLE, with why), and
    when Slurm does not answer within ``slurm_answer_s`` the Slurm runs are shown as their files say,
    with a note saying so."""
    statuses: dict[str, RunStatus | None] = {}
    views: dict[str, RunView] = {}
    for task in tasks:
        try:
            statuses[task.name] = read_status(task.run_dir)
        except (SweepgenError, OSError) as err:
            why = err.message if isinstance(err, SweepgenError) else (err.strerror or str(err))
            views[task.name] = RunView(task, None, unreadable=f"{task.run_dir / STATUS_FILE}: {why}")
    slurm_tasks = [t for t in tasks if (s := statuses.get(t.name)) and s.executor == "slurm"]
    if slurm_tasks:
        from sweepgen.run.slurm.executor import observe  # noqa: PLC0415 - lazy: the Slurm backend loads only for Slurm runs

        try:
            answered = _within(slurm_answer_s, lambda: observe(slurm_tasks))
            why = f"Slurm did not answer within {slurm_answer_s:g} s"
        except SweepgenError as err:  # e.g. the controller is down (scontrol ping)
            answered, why = None, f"Slurm could not be asked ({err.message})"
        if answered is not None:
            views.update({v.task.name: v for v in answered})
        else:
            note = (
                f"{why}: the states of its runs are what their status files say (a job may have ended since)"
            )
            for task in slurm_tasks:
                views[task.name] = replace(_file_view(task, statuses[task.name]), note=note)
    views.update(_vanished(tasks, statuses, views))
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
    # the same rule as `sweepgen run`, e.g. a "running" run whose sweepgen was SIGKILLed has ended:
    # it ended when its files last changed, not when `status` looked
    new = replace(status, state=state, reason=reason, ended=status.ended or _last_written(task.run_dir))
    if persist and state in TERMINAL:
        _persist(task, status, new)
    return RunView(task, new)


def _vanished(
    tasks: Sequence[RunTask], statuses: dict[str, RunStatus | None], views: dict[str, RunView]
) -> dict[str, RunView]:
    """Runs whose directory is gone although the sweep's Slurm journal says they were submitted:
    queued or running when Slurm still holds the job (the queue decides, not the missing folder),
    else failed with that reason; never shown as not started (a job cannot keep records there)."""
    gone = [
        t for t in tasks if t.name not in views and statuses.get(t.name) is None and not t.run_dir.exists()
    ]
    if not gone:
        return {}
    from sweepgen.run.slurm import executor as slurm  # noqa: PLC0415 - lazy: the Slurm backend loads only for Slurm runs

    root = slurm.slurm_root([t.run_dir for t in tasks])
    # an unusable journal (a link, not JSON, a job id that is not Slurm's) is exit 2 naming it: shown
    # as never started, those runs would be submitted again while Slurm may still hold them
    submitted = slurm.submitted_as(slurm.read_journal(root / slurm.JOURNAL), root / slurm.JOURNAL)
    named = [t.name for t in gone if t.name in submitted]
    try:
        # asked within the time `status` gives Slurm: a hung squeue must not hold it
        held = _within(SLURM_ANSWER_S, lambda: slurm.held_jobs(named, root)) if named else {}
    except SweepgenError:  # no Slurm here, or it refused: not known whether it holds the job
        held = None
    out = {}
    for task in gone:
        if task.name not in submitted:
            continue
        job_id = submitted[task.name]
        job = held.get(task.name) if held is not None else None
        if job is not None:  # Slurm still holds it: its state is the queue's, and it is not resubmitted
            state = RunState.PENDING if job.state == "PENDING" else RunState.RUNNING
            reason = f"its run directory {task.run_dir} is gone; Slurm still holds job {job_id} ({job.state})"
            status = RunStatus(
                state, "slurm", reason=reason, ids={"job_id": job_id, "slurm_state": job.state}
            )
        else:
            reason = f"its run directory {task.run_dir} is gone (submitted as Slurm job {job_id})"
            if held is None:
                reason += "; Slurm did not answer, so it may still hold that job"
            status = RunStatus(RunState.FAILED, "slurm", reason=reason, ids={"job_id": job_id})
        out[task.name] = RunView(task, status, job)
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
    for name in (LOG_FILE, STATUS_FILE, "metrics.jsonl", "metrics.csv"):
        try:
            times.append(os.stat(run_dir / name).st_mtime)
        except OSError:
            continue
    if not times:
        return utc_now()
    return datetime.fromtimestamp(max(times), timezone.utc).isoformat(timespec="milliseconds")


def _within(seconds: float, ask: Callable[[], _T]) -> _T | None:
    """``ask()``'s answer, or None when it takes longer than ``seconds`` (it is left to finish in a
    daemon thread: a hung squeue must not hold `status`, nor its exit)."""
    box: queue.Queue[tuple[bool, object]] = queue.Queue()

    def work() -> None:
        try:
            box.put((True, ask()))
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread
            box.put((False, err))

    threading.Thread(target=work, daemon=True, name="sweepgen-slurm-query").start()
    try:
        ok, value = box.get(timeout=seconds)
    except queue.Empty:
        return None
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return cast(_T, value)


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
    """The last lines of the run's latest attempt in run.log; for a Slurm job that died before the
    run wrote anything, submitit's error log (where Slurm and the wrapper report)."""
    tail = run_log_tail(view.task.run_dir, lines=lines)
    if tail or view.status is None or view.status.executor != "slurm":
        return view.task.run_dir / LOG_FILE, tail
    from sweepgen.run.slurm.executor import submitit_log  # noqa: PLC0415 - lazy: the Slurm backend loads only for Slurm runs

    path = submitit_log(view.status)
    if path is None or not path.is_file():
        return path, []
    return path, path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]


def problems(views: Sequence[RunView]) -> list[RunView]:
    return [v for v in views if v.problem]
