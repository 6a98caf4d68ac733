"""The one place that maps `--executor NAME` to an executor class (imported lazily, so the local
executor never pays for submitit). Add an executor by adding a line here: `run`, `status`, `cancel`
and the CLI's `--executor` choices all go through it. Its `resources:` section (the keys it takes) is
declared beside, in sweepgen.compile.spec.request.executor_resources, under the same name."""

from __future__ import annotations

import importlib
import os
import select
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sweepgen.compile.run_api import placed
from sweepgen.errors import UserError

if TYPE_CHECKING:  # annotations only: `sweepgen --help` reads NAMES and must not load the lock's yaml
    from pathlib import Path

    from sweepgen.run.core.base import Executor, ExecutorOptions, RunStatus, RunTask

EXECUTORS: dict[str, str] = {
    "local": "sweepgen.run.local.executor:LocalExecutor",
    "slurm": "sweepgen.run.slurm.executor:SlurmExecutor",
}
NAMES = tuple(EXECUTORS)  # `--executor`'s choices
DEFAULT = "local"  # where runs execute when no --executor was given or recorded


def executor_class(name: str) -> type[Executor]:
    """The class of the executor called ``name`` (its module imported now)."""
    target = EXECUTORS.get(name)
    if target is None:
        raise UserError(
            f"unknown executor {name!r}",
            hint=f"choose one of: {', '.join(sorted(EXECUTORS))}",
        )
    module, attr = target.split(":")
    executor: type[Executor] = getattr(importlib.import_module(module), attr)
    return executor


def resource_keys(name: str) -> tuple[str, ...]:
    """The ``resources:`` keys the executor called ``name`` takes (its declared section)."""
    from sweepgen.compile import run_api  # noqa: PLC0415 - loaded on use: the sections are pydantic models

    if name not in EXECUTORS:
        executor_class(name)  # refused as --executor refuses it
    return tuple(run_api.EXECUTOR_RESOURCES[name].model_fields)


def make_executor(name: str, options: ExecutorOptions) -> Executor:
    """The executor for ``options``' sweep; what it refuses in the lock (resources it cannot run)
    is an error at the spec's line that wrote it."""
    with placed(options.sweep_dir, options.lock):
        return executor_class(name)(options)


def cancel_runs(executor: str, runs: Sequence[tuple[RunTask, RunStatus]], reason: str) -> list[str]:
    """`sweepgen cancel` of live runs the executor ``executor`` started; the names it cannot reach."""
    return executor_class(executor).cancel_runs(runs, reason)


def settle_for_cancel(sweep_dir: Path, tasks: Sequence[RunTask]) -> list[str]:
    """`sweepgen cancel`, before it looks: each executor that keeps records of its own waits for a
    start under way and ends what a dead `sweepgen run` left unrecorded (Executor.settle_for_cancel);
    what each did, one line each."""
    return [line for name in NAMES for line in executor_class(name).settle_for_cancel(sweep_dir, tasks)]


def status_is_alive(status: RunStatus) -> bool:
    """Ask the executor that wrote a ``running`` status whether its process/job still exists."""
    return executor_class(status.executor).is_alive(status)


def wait_for_an_end(statuses: Sequence[RunStatus], timeout_s: float) -> bool:
    """Up to ``timeout_s``, woken as soon as a process one of ``statuses`` names ends (Executor.end_fd:
    a local run's supervisor); False at once where none of them can be watched so, and the caller
    sleeps its interval (a Slurm job, a run of another machine, statuses of an unknown executor)."""
    fds: list[int] = []
    try:
        for status in statuses:
            fd = executor_class(status.executor).end_fd(status) if status.executor in NAMES else None
            if fd is not None:
                fds.append(fd)
        if not fds:
            return False
        poller = select.poll()  # not select.select: no FD_SETSIZE limit on how many runs
        for fd in fds:
            poller.register(fd, select.POLLIN)
        poller.poll(max(0, int(timeout_s * 1000)))
        return True
    finally:
        for fd in fds:
            os.close(fd)


def running_note(status: RunStatus) -> str | None:
    """The executor's note on a ``running`` status (Executor.running_note); None for an executor
    sweepgen does not know (the status is data)."""
    return executor_class(status.executor).running_note(status) if status.executor in NAMES else None
