"""Room kept on disk for a run's end, so that a disk that fills up while the run trains (its
checkpoints, a neighbour's) cannot leave the run recorded ``running`` for ever.

Before the trainer starts, its recorder (the local supervisor) writes a spare file of ``SIZE`` zero
bytes beside the status file and keeps it open. A status is normally written as a new temporary
file renamed onto the old one (runfs.write_atomic), which needs free blocks. When that fails for
want of room, the end is written over the spare's own bytes (blocks it already holds: no new ones
are needed; the rest blank, which JSON allows after a value) and the spare renamed onto the status
file: still atomic, never through a link (the spare is only renamed while it is the very file this
recorder created).

No room for the spare at the start means no room for the end either: the run is not started.
A read-only disk takes nothing, this rename included: there the end stays unrecorded (said in
run.log where the log still takes it, and by the `sweepgen run` that started the run).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from sweepgen.fs import filenames, runfs

SPARE = filenames.STATUS_SPARE
SIZE = 64 * 1024  # a status is a few KiB; its command line is the only part that grows


def reserve(run_dir: Path, size: int = SIZE) -> int:
    """Create the spare in ``run_dir`` (a leftover of an attempt whose recorder was killed is
    replaced), ``size`` bytes written; its descriptor, to keep. Raises OSError (a full disk)."""
    path = run_dir / SPARE
    runfs.unlink(path)
    fd = runfs.open_file(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        zeros = memoryview(bytes(size))
        while zeros:
            zeros = zeros[os.write(fd, zeros) :]
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            runfs.unlink(path)
        raise
    return fd


def write_status(run_dir: Path, data: bytes, spare: int | None) -> bool:
    """``data`` as ``run_dir``'s status file, atomically; where the disk is full, over the ``spare``
    (when given). True when the spare took it (the disk is full: say so, start nothing more).
    Raises OSError (the first error, where the spare could not help)."""
    try:
        runfs.write_atomic(run_dir / filenames.STATUS, data)  # never through a link on the way
    except OSError as err:
        if spare is None or err.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        write_end(run_dir, spare, data)
        return True
    return False


def write_end(run_dir: Path, fd: int, data: bytes) -> None:
    """``data`` written over the spare ``fd``, which then replaces ``run_dir``'s status file.
    Raises OSError (the spare replaced by someone else, too small, or a read-only disk)."""
    kept = os.fstat(fd)
    if len(data) > kept.st_size:
        raise OSError(errno.ENOSPC, f"the end takes more than the {kept.st_size} bytes kept for it")
    # padded to the room's size with the blank JSON allows after a value: the room stays taken, so
    # a full disk gets nothing back from a run's end that the other runs would then fill unseen
    padded = data + b" " * (kept.st_size - len(data) - 1) + b"\n" if len(data) < kept.st_size else data
    view, at = memoryview(padded), 0
    while at < len(padded):
        at += os.pwrite(fd, view[at:], at)
    os.fsync(fd)
    with runfs.parent(run_dir / SPARE) as (folder, name):
        found = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if (found.st_dev, found.st_ino) != (kept.st_dev, kept.st_ino):
            raise OSError(errno.ESTALE, "the spare file was replaced", str(run_dir / SPARE))
        os.replace(name, filenames.STATUS, src_dir_fd=folder, dst_dir_fd=folder)


def discard(run_dir: Path, fd: int) -> None:
    """The spare is not needed (the end was recorded the usual way): closed and removed."""
    os.close(fd)
    with contextlib.suppress(OSError):  # a read-only disk: a leftover the next attempt replaces
        runfs.unlink(run_dir / SPARE)


def moved_to(lock_fd: int | None, home: str) -> Path | None:
    """Where the run's folder is now, if it was moved (not deleted) since its recorder took its lock
    (Linux: the lock's name in /proc). ``home``: the folder's real path at the start (not now: a
    link put where the folder was, to where it was moved, resolves to the folder it was moved to)."""
    try:
        where = os.readlink(f"/proc/self/fd/{lock_fd}") if lock_fd is not None else ""
    except OSError:
        return None
    folder = os.path.dirname(where)
    if not where or where.endswith(" (deleted)") or folder == home:
        return None
    return Path(folder)
