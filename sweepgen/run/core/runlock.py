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

import contextlib
import errno
import fcntl
import itertools
import os
import pwd
import stat
import time
from pathlib import Path

from sweepgen.fs import filenames, runfs, safefs
from sweepgen.fs.runfs import is_own

RUN_LOCK_NAME = filenames.RUN_LOCK
# a probe (`status`, `plan`) holds the lock for microseconds; a starter retries for this long before
# concluding that a real holder has it
ACQUIRE_RETRY_S = 0.3


def _lock_path(run_dir: Path) -> Path:
    return run_dir / RUN_LOCK_NAME


def _open(run_dir: Path, *, create: bool) -> int | None:
    # never through a link (at the file or a folder on the way), never a FIFO or device: runfs;
    # a probe (``create`` False: `status`, `report`, `plan`) opens it only to read
    flags = os.O_RDWR | os.O_CREAT if create else os.O_RDONLY
    try:
        return runfs.open_file(_lock_path(run_dir), flags, 0o644)
    except FileNotFoundError:
        if create:
            raise
        return None


def acquire(run_dir: Path, *, retry_s: float = ACQUIRE_RETRY_S) -> int | None:
    """Lock ``run_dir`` (which must exist); the open descriptor, or None if another process holds it.
    Raises OSError when the lock file cannot be created (read-only disk, a symlink in its place).
    The lock held is always a file of this user's that nobody else can write and that has no other
    name (``_made_own``): what ``record_home`` writes in it is then the run's own word."""
    deadline = time.monotonic() + retry_s
    for _ in range(_REOPENS):
        try:
            fd = _open(run_dir, create=True)
        except PermissionError as err:
            raise _foreign_lock(run_dir) or err from err
        assert fd is not None
        try:
            if not flock_within(fd, max(0.0, deadline - time.monotonic()), every_s=0.02):
                os.close(fd)
                return None
            if _still_named(fd, run_dir):
                return _made_own(fd, run_dir)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder replaced it by its own (``_made_own``) meanwhile: lock that one
    raise OSError(
        errno.EAGAIN,
        "the run's lock file is replaced again and again (by another user?)",
        str(_lock_path(run_dir)),
    )


class ForeignLockError(PermissionError):
    """The run's lock file is another user's and this user cannot write it: the runs folder is
    shared with them. Its ``strerror`` says whose, and how to go on; nothing was started or changed."""


def _foreign_lock(run_dir: Path) -> ForeignLockError | None:
    """Why the lock file could not be opened to write, where it is another user's file (None for
    any other cause: a folder this user cannot write, a file of this user's made read-only)."""
    path = _lock_path(run_dir)
    try:
        info = runfs.lstat(path)
    except OSError:
        return None
    if info.st_uid == os.geteuid():
        return None
    who = _user_name(info.st_uid)
    message = (
        f"its lock file {path} belongs to user {who} (uid {info.st_uid}, mode "
        f"{stat.S_IMODE(info.st_mode):04o}) and you cannot write it: this runs folder is shared with "
        f"{who}, whose `sweepgen run` made it. Nothing was started and nothing of theirs was changed. "
        f"If the run is {who}'s to run, leave it to them (`sweepgen status` shows it); to run it "
        "yourself, render the sweep with run folders of your own (its `run_dir`/`output_dir` under a "
        f"folder only you write), or have {who} remove {path} once no run of theirs is live"
    )
    return ForeignLockError(errno.EACCES, message, str(path))


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


_REOPENS = 20  # a lock file replaced under a waiting acquirer more often than this is someone's game


def _still_named(fd: int, run_dir: Path) -> bool:
    """Whether the lock file ``fd`` is still the one at the lock's name (a holder that found it not
    its own put a new one there, ``_made_own``: the old file locks nothing any more)."""
    held = os.fstat(fd)
    try:
        now = runfs.lstat(_lock_path(run_dir))
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _made_own(fd: int, run_dir: Path) -> int:
    """``fd`` (its flock held) where its file is this user's own (``is_own``), else a new lock file
    of this user's, locked, renamed over it (every acquirer checks after its flock that the file it
    locked is still the one named, ``_still_named``), with ``fd`` closed: the old file, whoever else
    has it open, is then no run's lock."""
    if is_own(os.fstat(fd)):
        return fd
    with runfs.parent(_lock_path(run_dir)) as (folder, name):
        tmp = f"{safefs.TEMP_PREFIX}{os.getpid()}-{next(_temp_ids)}.tmp"
        new = os.open(tmp, _NEW_FLAGS, 0o600, dir_fd=folder)
        try:
            fcntl.flock(new, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: nobody else has it open
            os.fchmod(new, 0o644)  # as _open creates it (readable: `status` probes it read-only)
            os.rename(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            os.close(new)
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
            raise
    os.close(fd)
    return new


_NEW_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_temp_ids = itertools.count()


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
    or whose supervisor died while the run goes on). Read-only: never creates the lock file, and
    opens it only to read (a reading command writes nothing in a shared runs folder; a lock file
    of another user's, which this user cannot write, is still probed)."""
    try:
        fd = _open(run_dir, create=False)
    except OSError:
        return False
    if fd is None:
        return False
    return held_elsewhere(fd)


def held_elsewhere(fd: int) -> bool:
    """Whether another open file holds an exclusive flock on ``fd``'s file, for a descriptor opened
    only to read: a shared flock, which any holder's exclusive one refuses (on NFS too, where a
    read-only descriptor can take no exclusive lock); ``fd`` is closed either way."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


HOME_MAX = 4096  # bytes of a run folder's path recorded in its lock (PATH_MAX)


def record_home(fd: int, run_dir: Path) -> None:
    """Write where the run starts (its folder's real path) into the lock file it holds as ``fd``.
    The supervisor keeps that very file open for the run's life, so `run` and `status` read it
    through ``/proc/PID/fd`` wherever the folder was moved: unlike the status file beside it, no
    one who can only write the folder can change it (``recorded_home``; ``acquire`` holds only a
    file that is this user's own). Raises OSError where it cannot be written (a full disk): the
    run is then not started, since where it started could be told only from the status file."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, os.fsencode(os.path.realpath(run_dir)) + b"\n", 0)


def recorded_home(held: str) -> str | None:
    """The run folder recorded in the lock file ``held`` (a ``/proc/PID/fd/N`` of its supervisor)
    by ``record_home``; None where nothing is (a supervisor of an older sweepgen), or where another
    user could have written it (``is_own``: a lock such a supervisor took as it found it)."""
    try:
        fd = os.open(held, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not is_own(os.fstat(fd)):
            return None
        raw = os.pread(fd, HOME_MAX + 1, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = os.fsdecode(raw[:-1]) if raw.endswith(b"\n") and len(raw) <= HOME_MAX else ""
    return text if os.path.isabs(text) and "\n" not in text else None
