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
from typing import TypeGuard

from sweepgen.fs import filenames, runfs
from sweepgen.run.core import runlock

SHARED_LOCK = filenames.SEARCH_SHARED_LOCK
OWNERS = "controllers"


@contextlib.contextmanager
def bookkeeping(state_dir: Path) -> Iterator[None]:
    """Held while a controller reads the study and asks, renders or takes over trials."""
    fd = runfs.open_file(state_dir / SHARED_LOCK, os.O_RDWR | os.O_CREAT, 0o644)  # never via a link
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class Owner:
    """This controller's identity, held alive by an flock for as long as the process lives."""

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / OWNERS
        runfs.makedirs(self.folder)  # a linked folder on the way is ELOOP, never followed
        self.name = f"{socket.gethostname()}.{os.getpid()}"
        self._fd = runfs.open_file(self.folder / self.name, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)  # a pid reused after a crash finds its old file free

    def close(self) -> None:
        os.close(self._fd)
        with contextlib.suppress(OSError):
            runfs.unlink(self.folder / self.name)

    def is_alive(self, name: object) -> bool:
        """Whether the controller ``name`` still runs (None: the trial was never claimed)."""
        if not _controller_name(name):  # never claimed, or not a name a controller gives itself
            return False
        if name == self.name:
            return True
        try:
            fd = runfs.open_file(self.folder / name, os.O_RDONLY)  # a probe writes nothing
        except OSError:  # gone, or a link or FIFO that no controller of ours made
            return False
        return runlock.held_elsewhere(fd)


def any_alive(state_dir: Path) -> bool:
    """Whether some controller of the search still runs (on a machine sharing the folder too)."""
    folder = state_dir / OWNERS
    try:
        names = runfs.listdir(folder)  # a linked folder is never listed
    except OSError:
        return False
    for name in names:
        try:
            fd = runfs.open_file(folder / name, os.O_RDONLY)  # `status` probes it: writes nothing
        except OSError:
            continue
        if runlock.held_elsewhere(fd):
            return True
    return False


def _controller_name(name: object) -> TypeGuard[str]:
    """A name a controller can have (``host.pid``: one file of the controllers' folder). The name
    comes from the study journal, a file anyone with the runs folder can write: a path
    (``../../../.ssh/x``, ``/etc/x``) or a value that is not text names no controller of ours and
    is never opened."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= 255
        and name not in (".", "..")
        and "/" not in name
        and os.sep not in name
        and "\0" not in name
    )
