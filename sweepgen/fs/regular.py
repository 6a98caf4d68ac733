"""The one bounded, non-blocking read of a regular file named by path.

A file a pull request or a shared folder holds may be a FIFO (an open for reading waits for a
writer for ever), a device (``/dev/zero`` never ends), a link (with ``follow=False``: never
followed) or a file of gigabytes. Here the file is opened ``O_NONBLOCK`` (a FIFO never waits),
``O_NOCTTY`` and ``O_CLOEXEC``, used only when ``fstat`` says it is a regular file, refused from its
size before anything is read when that is over ``limit``, and read no further than ``limit`` bytes
(a file that grew past it while read is refused, never cut short in silence). Whatever stops the
read is ``NotRead``, saying why; each caller words it as its own error (a spec error at a line, a
lock that is damaged, a schema not judged).

Files in run folders, read by descriptor with no link anywhere on the way, are ``runfs``'s.
"""

from __future__ import annotations

import errno as errnos
import hashlib
import os
import stat
from typing import Final, Literal

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK: Final = 1 << 20

Why = Literal["missing", "link", "not regular", "too large", "error"]


class NotRead(Exception):
    """Why ``path`` was not read: ``missing`` (ENOENT), ``link`` (a link at the name, with
    ``follow=False``), ``not regular`` (``mode`` says what it is), ``too large`` (``size`` bytes or
    more, over the limit) or ``error`` (any other ``OSError``: ``errno``, ``strerror``)."""

    def __init__(
        self, path: str, why: Why, *, errno: int = 0, strerror: str = "", mode: int = 0, size: int = 0
    ) -> None:
        super().__init__(f"{path}: {why}")
        self.path, self.why, self.errno, self.strerror, self.mode, self.size = (
            path,
            why,
            errno,
            strerror,
            mode,
            size,
        )


def _open(path: str, follow: bool) -> tuple[int, os.stat_result]:
    """A descriptor for the regular file ``path`` and its ``fstat``; ``NotRead`` otherwise."""
    try:
        fd = os.open(path, _FLAGS | (0 if follow else _NOFOLLOW))
    except OSError as err:
        raise _refused(path, err, follow) from None
    try:
        info = os.fstat(fd)
    except OSError as err:
        os.close(fd)
        raise _error(path, err) from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotRead(path, "not regular", mode=info.st_mode)
    return fd, info


def _error(path: str, err: OSError) -> NotRead:
    return NotRead(path, "error", errno=err.errno or 0, strerror=err.strerror or str(err))


def _refused(path: str, err: OSError, follow: bool) -> NotRead:
    """Why ``open`` failed: missing, a link at the name (never followed), or another error."""
    if err.errno == errnos.ENOENT:
        return NotRead(path, "missing", errno=err.errno)
    mode = _lstat_mode(path) if err.errno == errnos.ELOOP and not follow else 0
    if stat.S_ISLNK(mode):
        return NotRead(path, "link", errno=errnos.ELOOP, mode=mode)
    return _error(path, err)


def _lstat_mode(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def read(path: str, *, limit: int, follow: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; ``NotRead`` otherwise.
    ``follow=False``: a link at ``path`` itself is ``link``, never followed (folders above it are
    the caller's to confine)."""
    fd, info = _open(path, follow)
    try:
        if info.st_size > limit:
            raise NotRead(path, "too large", size=info.st_size)
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, min(_CHUNK, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while read (or its size said less: /proc)
            raise NotRead(path, "too large", size=size)
        return b"".join(chunks)
    except OSError as err:
        raise _error(path, err) from None
    finally:
        os.close(fd)


def sha256(path: str, *, follow: bool = True) -> str:
    """The sha256 of the regular file ``path``, read a chunk at a time (never held whole);
    ``NotRead`` for anything else."""
    fd, _info = _open(path, follow)
    try:
        digest = hashlib.sha256()
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError as err:
        raise _error(path, err) from None
    finally:
        os.close(fd)
