"""Run folders opened like the output tree: folder by folder by descriptor, never through a link.

Checking a run folder with ``realpath`` and then opening its files by path leaves a window: on a
shared runs folder anyone may swap ``runs/a`` for a link to ``~/.ssh`` between the check and the
open, and a committed link inside the project is followed by every later open. Here each path is
split into a trusted *anchor* and the components below it. The anchor is the deepest of the
working directory and the folders the person running sweepgen named on the command line
(``trust``) that holds the path; it is opened as given. Every component below it is opened with
``openat(O_NOFOLLOW | O_DIRECTORY)`` from the folder above, and the file itself with ``O_NOFOLLOW``
(``O_NONBLOCK`` too: a FIFO never blocks) and kept only when ``fstat`` says it is a regular file.
A path outside every anchor (an absolute path elsewhere that nobody named) is anchored at its own
folder, so its file is still opened without following a link.

Folders are created the same way (``mkdir`` at a descriptor never follows a link: a link in the
way is ``EEXIST``, then refused when opened), and files are replaced atomically inside the opened
folder (``safefs.write_replace`` with its descriptor). Errors are ``OSError``: ``ELOOP`` naming the
link in the way, ``ENXIO`` for a file that is not a regular file.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import grp
import itertools
import os
import pwd
import stat
from collections.abc import Iterator
from typing import Final

from sweepgen.fs.confine import within
from sweepgen.fs.safefs import kind_of, write_replace

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOCTTY: Final = getattr(os, "O_NOCTTY", 0)
_DIR_FLAGS: Final = os.O_RDONLY | _DIRECTORY | _CLOEXEC
_trusted: list[str] = []  # folders named on the command line, as absolute paths (not resolved)


@contextlib.contextmanager
def trust(*folders: str | os.PathLike[str]) -> Iterator[None]:
    """While in the block, also anchor paths at ``folders`` (named on the command line: used as
    given, links in them included)."""
    added = [os.path.abspath(f) for f in folders]
    _trusted.extend(added)
    try:
        yield
    finally:
        for folder in added:
            _trusted.remove(folder)


def split(path: str | os.PathLike[str]) -> tuple[str, list[str]]:
    """``path`` as (anchor, components below it); the anchor is opened as given, the rest never
    through a link. ``..`` is resolved lexically first, so it never climbs out of an anchor."""
    full = os.path.abspath(path)
    anchors = sorted({os.getcwd(), *_trusted}, key=len, reverse=True)
    for anchor in anchors:
        if within(full, anchor):
            rest = os.path.relpath(full, anchor)
            return anchor, [] if rest == "." else rest.split(os.sep)
    return os.path.dirname(full), [os.path.basename(full)]


def _refused(fd: int, name: str, shown: str, err: OSError) -> OSError:
    """The error for ``name`` in ``fd`` that could not be opened as a folder: a link is ELOOP."""
    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError:
        return OSError(err.errno, err.strerror, shown)
    if stat.S_ISLNK(mode):
        return OSError(errno.ELOOP, "a symbolic link is in the way (never followed)", shown)
    return OSError(err.errno, err.strerror, shown)


def _walk(anchor: str, parts: list[str], *, create: bool) -> int:
    """A descriptor for the folder ``anchor``/``parts``, each part opened without following a link
    (created first when ``create``). A missing anchor (a folder outside every anchor, named as
    given) is created as given."""
    if create and not os.path.isdir(anchor):
        os.makedirs(anchor, exist_ok=True)
    fd = os.open(anchor, _DIR_FLAGS)
    shown = anchor
    try:
        for part in parts:
            shown = os.path.join(shown, part)
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except OSError as err:
                if err.errno in (errno.ENOTDIR, errno.ELOOP, errno.EMLINK):
                    raise _refused(fd, part, shown, err) from None
                raise OSError(err.errno, err.strerror, shown) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_dir(path: str | os.PathLike[str], *, create: bool = False) -> int:
    """A descriptor for the folder ``path`` (created with its parents when ``create``), no component
    below its anchor followed through a link. Raises OSError."""
    anchor, parts = split(path)
    return _walk(anchor, parts, create=create)


def makedirs(path: str | os.PathLike[str]) -> None:
    """``mkdir -p`` that never follows a link below the anchor (a linked folder is ELOOP)."""
    os.close(open_dir(path, create=True))


@contextlib.contextmanager
def parent(path: str | os.PathLike[str], *, create: bool = False) -> Iterator[tuple[int, str]]:
    """(descriptor of the folder holding ``path``, its name), the folder walked as ``open_dir``."""
    anchor, parts = split(path)
    if not parts:  # the anchor itself: open its parent as given
        anchor, parts = os.path.dirname(anchor), [os.path.basename(anchor)]
    fd = _walk(anchor, parts[:-1], create=create)
    try:
        yield fd, parts[-1]
    finally:
        os.close(fd)


def open_file(path: str | os.PathLike[str], flags: int, mode: int = 0o666, *, printed: bool = False) -> int:
    """A descriptor for the regular file ``path`` opened with ``flags``, neither it nor a folder
    below its anchor followed through a link, a FIFO never waited on (the descriptor is blocking
    again when returned). ELOOP for a link, ENXIO for anything but a regular file. ``printed``: what
    is read may be printed, so a hard link someone else may have made is EMLINK (``owners_name``)."""
    shown = os.fspath(path)
    with parent(path) as (folder, name):
        try:
            fd = os.open(name, flags | _NOFOLLOW | os.O_NONBLOCK | _NOCTTY | _CLOEXEC, mode, dir_fd=folder)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.EMLINK):
                raise OSError(errno.ELOOP, "a symbolic link (never followed)", shown) from None
            if err.errno == errno.ENXIO:  # a FIFO opened for writing with no reader, a socket
                raise OSError(errno.ENXIO, "not a regular file (a FIFO, socket or device)", shown) from None
            raise OSError(err.errno, err.strerror, shown) from None
        try:
            _check_opened(fd, folder if printed else None, shown)
        except BaseException:
            os.close(fd)
            raise
    return fd


def _check_opened(fd: int, folder: int | None, shown: str) -> None:
    """Refuse what is not a regular file, and (given its ``folder``) a hard link ``owners_name``
    refuses; make the descriptor blocking again (a regular file: reads and writes never short)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.ENXIO, f"not a regular file (a {kind_of(info.st_mode)})", shown)
    if folder is not None and not owners_name(info, os.fstat(folder)):
        raise OSError(errno.EMLINK, HARD_LINK_REFUSED, shown)
    os.set_blocking(fd, True)


HARD_LINK_REFUSED = "a hard link in a folder others can write or another user owns (never read)"


def owners_name(info: os.stat_result, folder: os.stat_result) -> bool:
    """Whether the file ``info`` has this name by its owner's doing: it has no other name, or the
    folder holding it (``folder``) is the file owner's and writable by nobody else.

    A hard link is the file itself, wherever its other name is: on a system that lets a user link
    files they cannot read (macOS; Linux with ``fs.protected_hardlinks=0``) anyone who can write in
    a shared runs folder can give a file of yours (``~/.config/gh/hosts.yml``) a run file's name
    there, and `status` printed it as a run's log, `report` as its config. Only whoever may write in
    a folder can make a name in it: in a folder only the file's owner writes, the link is theirs (a
    backup made with ``cp -al`` or ``rsync --link-dest``), and read as any other file."""
    return info.st_nlink <= 1 or only_owner_writes(folder, info.st_uid)


def only_owner_writes(folder: os.stat_result, uid: int) -> bool:
    """Whether the folder is the user ``uid``'s and nobody else can write in it (the group's bit only
    where the group is that user's private one, as umask 002 leaves it): only they make names there."""
    if folder.st_uid != uid or folder.st_mode & stat.S_IWOTH:
        return False
    return not folder.st_mode & stat.S_IWGRP or private_group(folder.st_uid, folder.st_gid)


def is_own(info: os.stat_result) -> bool:
    """A file this user created, nobody else can write, with no other name: what sweepgen trusts as
    its own word in a shared folder (a run's lock, where the run started; a report's record of what
    it wrote). A file another user planted, one a umask of 002 left group-writable (anyone of the
    group may have it open to write) or a hard link to a file elsewhere (written in place, that
    file's bytes) is not."""
    mode = info.st_mode
    return stat.S_ISREG(mode) and info.st_uid == os.geteuid() and not mode & 0o022 and info.st_nlink == 1


@functools.cache
def private_group(uid: int, gid: int) -> bool:
    """Whether ``gid`` is the user ``uid``'s own group and nobody else's (the user private groups of
    Debian, Ubuntu and Fedora, whose umask 002 makes every folder group-writable): named as the user,
    their primary group, listing no other member. Unknown (no such user or group): not private."""
    try:
        user, group = pwd.getpwuid(uid), grp.getgrgid(gid)
    except KeyError:
        return False
    return (user.pw_gid, group.gr_name, set(group.gr_mem) - {user.pw_name}) == (gid, user.pw_name, set())


def listdir(path: str | os.PathLike[str], limit: int = 1 << 62) -> list[str]:
    """The names in the folder ``path``, walked as ``open_dir`` (a linked folder is ELOOP, never
    listed); more than ``limit`` of them is E2BIG, found without listing the rest."""
    fd = open_dir(path)
    try:
        names = first_names(fd, limit)
    finally:
        os.close(fd)
    if names is None:
        raise OSError(errno.E2BIG, f"holds more than {limit:,} entries (not listed)", os.fspath(path))
    return names


def first_names(folder: str | os.PathLike[str] | int, limit: int) -> list[str] | None:
    """The names in ``folder`` (a descriptor, or a path opened as ``os.scandir`` opens it), None
    where there are more than ``limit``: read a batch at a time and stopped there, so a folder of a
    million entries is never listed whole (OSError as ``os.scandir``'s)."""
    with os.scandir(folder) as entries:
        names = [entry.name for entry in itertools.islice(entries, limit + 1)]
    return names if len(names) <= limit else None


def lstat(path: str | os.PathLike[str]) -> os.stat_result:
    """``lstat`` of ``path`` whose folders are walked as ``open_dir`` (a linked folder is ELOOP)."""
    with parent(path) as (folder, name):
        return os.stat(name, dir_fd=folder, follow_symlinks=False)


def unlink(path: str | os.PathLike[str], *, missing_ok: bool = True) -> None:
    """Remove the file (or link) ``path``; a link on the way to it is ELOOP, never followed."""
    try:
        with parent(path) as (folder, name):
            os.unlink(name, dir_fd=folder)
    except FileNotFoundError:
        if not missing_ok:
            raise


def write_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = False) -> None:
    """``safefs.write_atomic`` inside a folder walked (and created) as ``open_dir``: a link at
    ``path`` is replaced, a linked folder on the way is ELOOP. Raises OSError naming ``path``."""
    shown = os.fspath(path)
    with parent(path, create=True) as (folder, name):
        try:
            write_replace(folder, shown, name, data, durable)
        except OSError as err:
            raise OSError(err.errno, err.strerror, shown) from None


def is_file(path: str | os.PathLike[str]) -> bool:
    """A regular file at ``path`` (not a link), reached without following a link."""
    try:
        return stat.S_ISREG(lstat(path).st_mode)
    except (OSError, ValueError):
        return False
