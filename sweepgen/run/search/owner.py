"""Who drives which trial of a search: one lock for the controllers' shared bookkeeping, and one
liveness lock per controller.

Both are ``flock`` locks in the search's state folder, so the kernel (or the NFS server, which Linux
maps ``flock`` to byte-range locks for) releases them when their holder dies: no pid files to
clean, no timeouts to guess. A trial left running in the study by a controller whose liveness lock
is free was orphaned by a kill, and the next controller takes it over (re-attaches to its run, or
resumes it), under the shared lock, so two controllers never take the same trial.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from sweepgen import filenames
from sweepgen.run.core import runlock

SHARED_LOCK = filenames.SEARCH_SHARED_LOCK
OWNERS = "controllers"


@contextlib.contextmanager
def bookkeeping(state_dir: Path) -> Iterator[None]:
    """Held while a controller reads the study and asks, renders or takes over trials."""
    fd = os.open(state_dir / SHARED_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class Owner:
    """This controller's identity, held alive by an flock for as long as the process lives."""

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / OWNERS
        self.folder.mkdir(parents=True, exist_ok=True)
        self.name = f"{socket.gethostname()}.{os.getpid()}"
        self._fd = os.open(self.folder / self.name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)  # a pid reused after a crash finds its old file free

    def close(self) -> None:
        os.close(self._fd)
        with contextlib.suppress(OSError):
            (self.folder / self.name).unlink()

    def is_alive(self, name: str | None) -> bool:
        """Whether the controller ``name`` still runs (None: the trial was never claimed)."""
        if name is None:
            return False
        if name == self.name:
            return True
        try:
            fd = os.open(self.folder / name, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        return runlock.locked_elsewhere(fd)


def any_alive(state_dir: Path) -> bool:
    """Whether some controller of the search still runs (on a machine sharing the folder too)."""
    folder = state_dir / OWNERS
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return False
    for name in names:
        try:
            fd = os.open(folder / name, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        if runlock.locked_elsewhere(fd):
            return True
    return False
