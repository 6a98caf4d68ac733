"""GPU slots shared by the local `sweepgen run`s of one runs folder (two runs of the same sweep
started side by side, each with ``--gpus ... --per-gpu N``): each counts the other's live runs on
its GPUs, so together they never pack more than ``--per-gpu`` runs on a GPU.

What another `sweepgen run` runs is known from the runs' status files (the GPUs in ``ids.gpu``,
written by each run's supervisor before its trainer starts; alive as liveness says). A pick and the
start it leads to are made while holding an ``flock`` on ``<runs folder>/.sweepgen-gpus.lock``, and
that lock is let go only once the new run's supervisor has written its status: so the other
`sweepgen run` never picks from a count that misses a run started a moment before. The same lock in
the folder above (``runs/.sweepgen-gpus.lock``) is held first, so the project's other sweeps take
turns with it too.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path

from sweepgen.errors import SweepgenError, UserError
from sweepgen.fs import filenames, runfs
from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, read_status, this_host
from sweepgen.run.local import liveness

LOCK = filenames.GPU_LOCK
LOCK_WAIT_S = 60.0  # a holder keeps it for one start (ms); this long means it is stuck (SIGSTOP)
SEEN_WAIT_S = 10.0  # how long a start may take to show its GPUs in its status


class Unavailable(OSError):
    """The GPU lock could not be made or opened (a read-only or full disk, a link in its place)."""


@contextlib.contextmanager
def held(folders: Iterable[Path]) -> Iterator[None]:
    """The GPU lock of the project's runs root (the folder holding these runs folders, where it is
    below the working directory: ``runs/``), then of each runs folder, in one order (no two
    holders wait on each other). The first makes two sweeps of the project starting runs at the
    same instant take turns: each counts the other's runs through their supervisors (others_load),
    which a run's status names only once its start, made under the lock, is done."""
    with contextlib.ExitStack() as stack:
        for folder in _lock_order(folders):
            stack.enter_context(_held(folder))
        yield


def _lock_order(folders: Iterable[Path]) -> list[Path]:
    """The folders whose lock is held, each once (by real path: a second flock of one file from
    this process would wait for ever), shallower first, so every holder takes them in one order."""
    wanted: dict[str, Path] = {}
    for folder in folders:
        wanted.setdefault(os.path.realpath(folder), folder)
        if _in_project(folder.parent):
            wanted.setdefault(os.path.realpath(folder.parent), folder.parent)
    return [wanted[real] for real in sorted(wanted, key=lambda real: (real.count(os.sep), real))]


def _in_project(folder: Path) -> bool:
    """Whether ``folder`` is inside the working directory: no shared folder elsewhere, nor the
    project's own top, gets a lock file of ours."""
    return os.path.realpath(folder).startswith(os.path.realpath(os.getcwd()) + os.sep)


@contextlib.contextmanager
def _held(folder: Path) -> Iterator[None]:
    path = folder / LOCK
    try:
        runfs.makedirs(folder)  # a linked folder on the way is ELOOP, never followed
        fd = runfs.open_file(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:  # named by its path (runfs names the folder it walked from)
        raise Unavailable(err.errno, err.strerror, str(path)) from None
    try:
        if not runlock.flock_within(fd, LOCK_WAIT_S, every_s=0.01):
            raise UserError(
                f"another `sweepgen run` has held {path} for {LOCK_WAIT_S:.0f} s to start a run",
                hint="look for a stopped `sweepgen run` (Ctrl-Z: `fg` it) with `ps`, then run again",
            )
        yield
    finally:
        os.close(fd)


def others_load(folders: Iterable[Path], gpus: Collection[str], ours: Collection[Path]) -> dict[str, int]:
    """How many live runs of this machine that are not ``ours`` use each of ``gpus``, from the
    status files of the run folders in ``folders`` and of those under this working directory (the
    project) that live supervisors run (another sweep's runs; /proc)."""
    load = dict.fromkeys(gpus, 0)
    mine = {os.path.realpath(run_dir) for run_dir in ours}
    for run_dir in _run_dirs(folders) - mine:
        for gpu in _gpus_of(Path(run_dir)):
            if gpu in load:
                load[gpu] += 1
    return load


def _run_dirs(folders: Iterable[Path]) -> set[str]:
    """The run folders in ``folders``, and those of live supervisors under this working directory
    (by real path: each counted once)."""
    found: set[str] = set()
    for folder in set(folders):
        with contextlib.suppress(OSError):
            found.update(os.path.realpath(folder / name) for name in runfs.listdir(folder))
    here = os.path.realpath(os.getcwd()) + os.sep
    return found | {d for d in liveness.supervised_folders() if d.startswith(here)}


def _gpus_of(run_dir: Path) -> list[str]:
    """The GPUs a live local run of this machine in ``run_dir`` uses; none for any other."""
    try:
        status = read_status(run_dir)
    except (OSError, SweepgenError):
        return []
    if status is None or status.state is not RunState.RUNNING or status.executor != liveness.EXECUTOR:
        return []
    gpu = status.ids.get("gpu")
    if not isinstance(gpu, str) or status.ids.get("host") != this_host():
        return []
    return gpu.split(",") if liveness.supervisor_alive(status) else []


def wait_seen(run_dir: Path, pid: int, poll: Callable[[], int | None]) -> None:
    """Until the status in ``run_dir`` is the one supervisor ``pid`` wrote (so it names its GPUs),
    or ``poll()`` says the supervisor has exited, or SEEN_WAIT_S passed."""
    deadline = time.monotonic() + SEEN_WAIT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, SweepgenError):
            status = read_status(run_dir)
            if status is not None and status.ids.get("pid") == pid:
                return
        if poll() is not None:
            return
        time.sleep(0.002)
