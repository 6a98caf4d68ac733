"""The state of every run of a sweep, whichever executor ran it, for `sweepgen status` and `cancel`.

Reads only what is on disk (each run's ``sweepgen_status.json`` and ``summary.json``) plus, for
runs on Slurm, one squeue and one sacct call; so it works from any shell, any time after `run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sweepgen.run.base import (
    LOG_FILE,
    TERMINAL,
    RunState,
    RunStatus,
    RunTask,
    effective_state,
    read_status,
)

# Slurm's words for endings that say more than "failed" (shown instead of FAILED/CANCELLED)
SLURM_WORDS = frozenset({"TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "PREEMPTED"})
PROBLEM_STATES = frozenset({RunState.FAILED, RunState.CANCELLED})


@dataclass(frozen=True)
class RunView:
    """A run as `status` shows it: its (reconciled) status and, on Slurm, what squeue/sacct said."""

    task: RunTask
    status: RunStatus | None  # None: never started
    job: object | None = None  # slurm_query.JobInfo for Slurm runs

    @property
    def state(self) -> RunState | None:
        return self.status.state if self.status else None

    @property
    def label(self) -> str:
        """The state word users see: ours in capitals, or Slurm's where it says more (TIMEOUT)."""
        if self.status is None:
            return "NOT STARTED"
        word = self.status.ids.get("slurm_state")
        if word in SLURM_WORDS and self.status.state is not RunState.FINISHED:
            return str(word)
        return self.status.state.value.upper()

    @property
    def live(self) -> bool:
        return self.status is not None and self.status.state not in TERMINAL


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
    return [views[t.name] for t in tasks]


def _plain_view(task: RunTask, status: RunStatus | None) -> RunView:
    if status is None:
        return RunView(task, None)
    state, reason = effective_state(task.run_dir, status, _status_is_alive)
    assert state is not None  # only a missing status has no state
    if state is status.state:
        return RunView(task, status)
    return RunView(task, replace(status, state=state, reason=reason))  # the same rule as `sweepgen run`


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
    return [v for v in views if v.state in PROBLEM_STATES]
