"""Writing files safely, and saying what went wrong when the machine refuses (ground floor).

- ``write_atomic``: the one atomic writer (temp file in the same folder, then ``os.replace``) used by
  the compiler (through ``sweepgen.fs.outtree``), the run layer and the trainer. Files get the umask's
  mode (0644 by default), like any file a user creates, not mkstemp's private 0600. Temp files are
  named after the process, so every name the file system accepts can be written, and are removed
  when the write fails or is interrupted.
- OS errors that come from the environment (full or read-only disk, permissions, over-long names, a
  file or folder in the way, a closed pipe) get a hint: ``fs_error`` makes them ``FsError`` (exit 2
  with the path), and the CLI funnel uses ``is_environment_fault``/``hint_for`` for the rest.
- ``UnsafePath``: a symlink, FIFO, device or socket where sweepgen must read or write a file.
- ``walk``: ``os.walk`` without recursion (Python 3.11's recurses: a committed folder 1,500 deep
  ended a walk in a RecursionError, exit 70), each folder listed by descriptor only while it is the
  folder its parent's listing found (no link swapped in meanwhile).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterator
from typing import Final

from sweepgen.errors import Location, UserError

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NEW_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC

# Temp files are named after the process, never after the target: a 255-byte output name must not
# make its temp name too long. ``.<name>.sweepgen-<pid>-<n>.tmp`` is the name older versions used.
TEMP_PREFIX: Final = ".sweepgen-"
TEMP_NAME: Final = re.compile(r"\.(?:.+\.)?sweepgen-\d+-\d+\.tmp")
_counter = itertools.count()

_HINTS: Final[dict[int, str]] = {
    errno.ENOSPC: "the disk is full: free some space, then run the command again "
    "(an interrupted render is finished by the next one)",
    errno.EDQUOT: "the disk quota is used up: free some space, then run the command again",
    errno.EROFS: "the file system is read-only: remount it read-write or choose another folder (-o DIR)",
    errno.EACCES: "permission denied: check the owner and mode of the path and its folders (ls -ld)",
    errno.EPERM: "operation not permitted: check the owner, mode and attributes of the path (lsattr)",
    errno.ENAMETOOLONG: "a file name is longer than the file system allows (usually 255 bytes): "
    "choose a shorter output name",
    errno.EISDIR: "a folder is where a file belongs: move the folder away",
    errno.ENOTDIR: "a file is where a folder belongs: move the file away",
    errno.ELOOP: "a symbolic link is in the way: sweepgen never reads or writes through symlinks; "
    "replace it with a real folder or file",
    errno.EPIPE: "the program reading the output exited before sweepgen finished writing",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n)",
    errno.ENFILE: "too many open files on the system: close some programs and run again",
    errno.EIO: "the device reported an I/O error: check the disk",
    errno.ENXIO: "a FIFO or device with no reader is in the way: remove it",
    errno.ENOENT: "the file or folder does not exist: check the path",
    errno.EBUSY: "the path is in use (a mount point?): choose another folder",
    errno.ETXTBSY: "the file is in use by a running program",
}


class FsError(UserError):
    """The environment refused a file operation: full or read-only disk, permissions, name length."""

    def __init__(self, message: str, *, location: Location, hint: str, errno_: int | None = None) -> None:
        super().__init__(message, location=location, hint=hint)
        self.errno = errno_


class UnsafePath(UserError):
    """A symlink, FIFO, device, socket or folder where sweepgen must read or write a regular file."""

    def __init__(self, message: str, *, where: str, kind: str, hint: str) -> None:
        super().__init__(message, location=Location(where), hint=hint)
        self.where = where
        self.kind = kind


def is_environment_fault(err: OSError) -> bool:
    """True for errors the user's machine causes (disk, permissions, names), not sweepgen bugs."""
    return err.errno in _HINTS


def hint_for(err: OSError) -> str:
    return _HINTS.get(err.errno or 0, "check the path and the file system")


def fs_error(err: OSError, shown: str, action: str) -> FsError:
    """``cannot <action> <shown>: <reason>`` with a hint for the errno."""
    reason = err.strerror or type(err).__name__
    return FsError(
        f"cannot {action} {shown}: {reason}", location=Location(shown), hint=hint_for(err), errno_=err.errno
    )


# an lstat mode's file type in the words error messages use
_KINDS = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "folder",
    stat.S_IFLNK: "symlink",
    stat.S_IFIFO: "FIFO",
    stat.S_IFCHR: "device",
    stat.S_IFBLK: "device",
    stat.S_IFSOCK: "socket",
}


def kind_of(mode: int) -> str:
    """What an lstat mode is, in the words error messages use."""
    return _KINDS.get(stat.S_IFMT(mode), "special file")


def unsafe_hint(kind: str) -> str:
    if kind == "symlink":
        return "sweepgen never reads or writes through symlinks; delete the link (git rm) and render again"
    if kind == "folder":
        return "move the folder away, then render again"
    if kind == "file":
        return "move the file away, then render again"
    return f"a {kind} has no place in a generated folder; delete it and render again"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_new(dir_fd: int, name: str, data: bytes) -> None:
    """Create the file ``name`` in the folder ``dir_fd`` (it must not exist: never a link followed,
    never a file overwritten) with mode 0666 minus the umask, as ``write_replace`` does, and write
    ``data``. A half-written file is removed. Raises OSError."""
    fd = os.open(name, _NEW_FLAGS, 0o666, dir_fd=dir_fd)
    try:
        _write_all(fd, data)
    except BaseException:
        with contextlib.suppress(OSError):  # keep the original error
            os.unlink(name, dir_fd=dir_fd)
        raise
    finally:
        os.close(fd)


def write_replace(dir_fd: int | None, folder: str, name: str, data: bytes, durable: bool) -> None:
    """Write a temp file (mode 0666 minus the umask) in ``folder`` (or ``dir_fd``), then rename it
    onto ``name``. The temp name is chosen before the file is created, so an interrupt (Ctrl-C) that
    lands anywhere after the creation still removes it. Raises OSError."""

    def at(n: str) -> str:
        return n if dir_fd is not None else os.path.join(folder, n)

    pid = os.getpid()
    tmp: str | None = None
    fd = -1
    try:
        while fd < 0:
            tmp = f"{TEMP_PREFIX}{pid}-{next(_counter)}.tmp"
            try:
                fd = os.open(at(tmp), _NEW_FLAGS, 0o666, dir_fd=dir_fd)
            except FileExistsError:  # a leftover of an earlier process with the same pid: not ours
                tmp = None
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        assert tmp is not None  # set by the loop that opened fd
        os.replace(at(tmp), at(name), src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        if tmp is not None:  # gone already when the rename went through
            with contextlib.suppress(OSError):  # keep the original error
                os.unlink(at(tmp), dir_fd=dir_fd)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = False) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    Creates missing parent folders. ``durable``: fsync the file before the rename (records whose loss
    at a power cut would lose a result, such as summary.json). A symlink at ``path`` itself is
    replaced, never written through. Raises ``OSError`` naming ``path`` (the CLI turns environment
    faults into exit 2).
    """
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    try:
        write_replace(None, folder, os.path.basename(path), data, durable)
    except OSError as err:  # name the target, not the temp file (os.write names none)
        raise OSError(err.errno, err.strerror, path) from None


def walk(
    top: str, on_error: Callable[[str, OSError], None] | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)``, top-down, links never entered (a link to a folder is listed among the
    folders, as ``os.walk`` lists it), a folder that cannot be listed skipped (``on_error`` is told
    first, with the folder, and may raise); without recursion, so any depth is walked. The caller
    may prune the folders list it is handed, as with ``os.walk``.
    Each folder below ``top`` is listed only if it is still the folder its parent's listing found
    (device and inode): one swapped for a link, or reached through an ancestor swapped for one,
    after it was found is skipped, never listed (a shared runs folder's writer could so have a
    folder outside listed)."""
    pending: list[tuple[str, tuple[int, int] | None]] = [(top, None)]
    while pending:
        folder, found = pending.pop()
        try:
            dirs, files, real = _listing(folder, found)
        except OSError as err:
            if on_error is not None:
                on_error(folder, err)
            continue
        yield folder, dirs, files
        pending.extend((os.path.join(folder, d), real[d]) for d in reversed(dirs) if d in real)


def _listing(
    folder: str, found: tuple[int, int] | None
) -> tuple[list[str], list[str], dict[str, tuple[int, int]]]:
    """(folders, other names, each real folder's device and inode) in ``folder``, opened without
    following a final link and listed by its descriptor, which must be the folder ``found`` (None:
    ``top``, opened as given). A link to a folder is among the folders, never among the real ones."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NONBLOCK | _CLOEXEC
    fd = os.open(folder, flags | (_NOFOLLOW if found is not None else 0))
    try:
        info = os.fstat(fd)
        if found is not None and (info.st_dev, info.st_ino) != found:
            raise OSError(errno.ESTALE, "not the folder its parent listed", folder)
        dirs: list[str] = []
        files: list[str] = []
        real: dict[str, tuple[int, int]] = {}
        with os.scandir(fd) as listing:
            for entry in listing:  # looked at while the descriptor is open (relative to it)
                (dirs if _is_dir(entry) else files).append(entry.name)
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):  # the listing's own word: no stat for files
                        own = entry.stat(follow_symlinks=False)
                        real[entry.name] = (own.st_dev, own.st_ino)
        return dirs, files, real
    finally:
        os.close(fd)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
