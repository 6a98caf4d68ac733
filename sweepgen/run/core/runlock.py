"""The run directory's lock: whoever holds it is the one process that may start or run that run.

An OS file lock (``flock``) on ``<run_dir>/.sweepgen.lock``, taken by the run's supervisor (the
local executor, or the Slurm task on the node) before anything is written and handed down to the
run's process, so it is held for the run's whole life by whichever of them is still alive:

- the kernel releases it when the last holder dies, so a crash never leaves a stale lock behind
  (no pid files to clean, no timeouts to guess);
- a ``flock`` belongs to the open file, which a child inherits: if sweepgen is SIGKILLed the run's
  supervisor keeps it locked until the run's whole process group is gone and its end recorded, and
  a later `sweepgen run` does not start it a second time.

A second `sweepgen run` on the same sweep therefore cannot start a run that is running, and, since
the state is re-read once the lock is held, cannot start one that ended meanwhile either.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from sweepgen.fs import filenames, runfs

RUN_LOCK_NAME = filenames.RUN_LOCK
# a probe (`status`, `plan`) holds the lock for microseconds; a starter retries for this long before
# concluding that a real holder has it
ACQUIRE_RETRY_S = 0.3


def _lock_path(run_dir: Path) -> Path:
    return run_dir / RUN_LOCK_NAME


def _open(run_dir: Path, *, create: bool) -> int | None:
    # never through a link (at the file or a folder on the way), never a FIFO or device: runfs
    flags = os.O_RDWR | (os.O_CREAT if create else 0)
    try:
        return runfs.open_file(_lock_path(run_dir), flags, 0o644)
    except FileNotFoundError:
        if create:
            raise
        return None


def acquire(run_dir: Path, *, retry_s: float = ACQUIRE_RETRY_S) -> int | None:
    """Lock ``run_dir`` (which must exist); the open descriptor, or None if another process holds it.
    Raises OSError when the lock file cannot be created (read-only disk, a symlink in its place)."""
    fd = _open(run_dir, create=True)
    assert fd is not None
    try:
        if flock_within(fd, retry_s, every_s=0.02):
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


def flock_within(fd: int, wait_s: float, *, every_s: float) -> bool:
    """Take an exclusive flock on ``fd``, trying every ``every_s`` for ``wait_s``; False when another
    holder kept it all that time (monotonic: a clock moved meanwhile changes nothing)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(every_s)


def release(fd: int) -> None:
    """Close this process's copy; the lock ends when no process (e.g. the run itself) has one."""
    try:
        os.close(fd)
    except OSError as err:  # closing twice is a caller bug; anything else cannot be acted upon
        if err.errno == errno.EBADF:
            raise


def is_held(run_dir: Path) -> bool:
    """Whether some live process holds the run's lock (a run started by a sweepgen that still runs,
    or whose supervisor died while the run goes on). Read-only: never creates the lock file."""
    try:
        fd = _open(run_dir, create=False)
    except OSError:
        return False
    if fd is None:
        return False
    return locked_elsewhere(fd)


def locked_elsewhere(fd: int) -> bool:
    """Whether another open file holds an flock on ``fd``'s file; ``fd`` is closed either way (which
    also drops the probe's own lock at once)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
