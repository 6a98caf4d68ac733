"""A folder walked and written without ever following a symlink (the sweep folder ``generated/<name>/``).

``OutputTree`` opens the folder once and reaches everything below it through directory file
descriptors: every component is opened with ``O_NOFOLLOW`` and looked at with ``lstat``; symlinks,
FIFOs, devices and sockets are reported, never opened, read or written through. A symlink committed
inside ``generated/<name>/`` therefore cannot make sweepgen create, change, delete or read anything
outside that folder, and a FIFO or ``/dev/zero`` cannot make it hang or fill memory. Writes go
through ``safefs.write_replace`` (temp file, then rename), so they are atomic too.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from typing import Final

from sweepgen.fs.safefs import UnsafePath, fs_error, kind_of, unsafe_hint, write_replace

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO must not wait for a writer
_NOCTTY: Final = getattr(os, "O_NOCTTY", 0)
_DIR_FLAGS: Final = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
_READ_FLAGS: Final = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC

# The most sweepgen reads of one file in a sweep folder (a lock, a generated file, the lock's spec):
# above every output limit a spec or pyproject.toml sets (256 MiB) and a two-million-variant lock. A
# sweep folder may be shared, and a larger file (sparse: free to make) was read whole: a 3 GB lock
# cost `status` 6 GB of memory.
MAX_READ_BYTES: Final = 1 << 30
# Directory fds kept open while writing: enough for locality (files arrive sorted), far below ulimit.
_MAX_OPEN_DIRS: Final = 64


def name_max(folder: str) -> int:
    """The longest file name (in bytes) the file system holding ``folder`` (or its nearest existing
    parent) allows; 255 where it cannot be asked."""
    while folder and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        return os.pathconf(folder or ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def check_names(rel: str, shown: str, limit: int) -> None:
    """Refuse a path with a component longer than ``limit`` bytes before anything is written."""
    for part in rel.split("/"):
        if len(os.fsencode(part)) > limit:
            raise fs_error(OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG)), shown, "write")


class Node:
    """What is at a relative path: ``kind`` is missing | file | folder | symlink | FIFO | device | …

    ``at`` is the path of the component that decided it: ``a`` when ``a`` (a file or a symlink) stands
    where ``a/b.yaml`` needs a folder; ``kind`` is then that component's kind and ``blocked`` is true.
    """

    __slots__ = ("kind", "at", "blocked", "size")

    def __init__(self, kind: str, at: str, *, blocked: bool = False, size: int = 0) -> None:
        self.kind = kind
        self.at = at
        self.blocked = blocked
        self.size = size

    def __repr__(self) -> str:
        return f"Node({self.kind!r}, {self.at!r}, blocked={self.blocked})"


_MISSING_DIR: Final = -1


class OutputTree:
    """A folder opened without following symlinks; paths are relative to it and ``/``-separated.

    Use as a context manager (it holds directory file descriptors). ``shown`` is the folder as the user
    reads it; every message names ``shown/rel``.
    """

    def __init__(self, fd: int, shown: str) -> None:
        self.fd = fd
        self.shown = shown
        self._dirs: dict[str, int] = {}  # rel folder -> fd, or _MISSING_DIR; "" is the root
        self._blocked: dict[str, Node] = {}  # rel folder -> the component that is not a folder
        self._pid = os.getpid()

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(cls, parent: str, name: str, shown: str, *, create: bool) -> OutputTree | None:
        """Open ``parent/name``; ``parent`` is the user's output root (followed as given), ``name`` is not.

        Returns None when the folder does not exist and ``create`` is false. A symlink or a file where
        the folder belongs raises ``UnsafePath``; other OS errors raise ``FsError``.
        """
        pfd = _open_root(parent, os.path.dirname(shown) or ".", create=create)
        if pfd is None:
            return None
        try:
            st = _stat_or_make(pfd, name, shown, create)
            if st is None:
                return None
            kind = kind_of(st.st_mode)
            if kind != "folder":
                raise UnsafePath(
                    f"{shown} is a {kind} where the sweep folder belongs",
                    where=shown,
                    kind=kind,
                    hint=unsafe_hint(kind),
                )
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
            except OSError as err:
                raise fs_error(err, shown, "open folder") from None
        finally:
            os.close(pfd)
        return cls(fd, shown)

    def __enter__(self) -> OutputTree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._dirs.values():
            if fd != _MISSING_DIR:
                os.close(fd)
        self._dirs.clear()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def where(self, rel: str) -> str:
        return f"{self.shown}/{rel}" if rel else self.shown

    # -- one writer at a time --------------------------------------------------------------------

    def hold(self) -> bool:
        """Take the folder's exclusive lock (held until ``close``, released by the kernel even on
        SIGKILL). False when another process holds it; True also where the file system has no
        locks (some network mounts), as before locking existed."""
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        except OSError as err:
            if err.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise fs_error(err, self.shown, "lock") from None
        return True

    def held_elsewhere(self) -> bool:
        """Whether another process holds the folder's exclusive lock right now (a render running)."""
        try:
            fcntl.flock(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:  # no locks on this file system: nobody can be seen writing
            return False
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        return False

    # -- looking --------------------------------------------------------------------------------

    def _dir_fd(self, rel_dir: str) -> int:
        """fd of a folder inside the tree, _MISSING_DIR if it does not exist; records blockers.
        From the nearest folder already known, down one folder at a time: no recursion, so a path
        1,500 folders deep (a spec's output, a lock's entry) is opened, not a RecursionError."""
        if not rel_dir:
            return self.fd
        hit = self._dirs.get(rel_dir)
        if hit is not None:
            return hit
        if rel_dir in self._blocked:
            return _MISSING_DIR
        parts = rel_dir.split("/")
        known, fd = 0, self.fd
        for depth in range(len(parts) - 1, 0, -1):
            at = "/".join(parts[:depth])
            hit = self._dirs.get(at)
            if hit is not None or at in self._blocked:
                known, fd = depth, _MISSING_DIR if hit is None else hit
                break
        for depth in range(known, len(parts)):
            fd = self._one_down(fd, "/".join(parts[:depth]), parts[depth])
        return fd

    def _one_down(self, parent: int, head: str, name: str) -> int:
        """fd of the folder ``name`` in ``parent`` (the folder at ``head``), remembered."""
        rel_dir = f"{head}/{name}" if head else name
        if parent == _MISSING_DIR:
            if head in self._blocked:
                self._blocked[rel_dir] = self._blocked[head]
            return self._remember(rel_dir, _MISSING_DIR)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            return self._remember(rel_dir, _MISSING_DIR)
        except OSError as err:
            return self._not_a_folder(err, parent, name, rel_dir)
        return self._remember(rel_dir, fd)

    def _not_a_folder(self, err: OSError, parent: int, name: str, rel_dir: str) -> int:
        """After ``err`` opening ``rel_dir`` as a folder: _MISSING_DIR, recorded as blocked, when
        something else stands there; a real folder we may not open (permissions) raises."""
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError:
            raise fs_error(err, self.where(rel_dir), "open folder") from None
        kind = kind_of(st.st_mode)
        if kind == "folder":
            raise fs_error(err, self.where(rel_dir), "open folder") from None
        self._blocked[rel_dir] = Node(kind, rel_dir, blocked=True)
        return _MISSING_DIR

    def _remember(self, rel_dir: str, fd: int) -> int:
        if len(self._dirs) >= _MAX_OPEN_DIRS:
            for key in list(self._dirs)[: _MAX_OPEN_DIRS // 2]:
                old = self._dirs.pop(key)
                if old != _MISSING_DIR:
                    os.close(old)
        self._dirs[rel_dir] = fd
        return fd

    def node(self, rel: str) -> Node:
        """What is at ``rel``, found with lstat on each component (nothing is followed or opened)."""
        head, _, name = rel.rpartition("/")
        parent = self._dir_fd(head)
        if parent == _MISSING_DIR:
            return self._blocked.get(head) or Node("missing", rel)
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return Node("missing", rel)
        except OSError as err:
            raise fs_error(err, self.where(rel), "look at") from None
        return Node(kind_of(st.st_mode), rel, size=st.st_size)

    def read_regular(self, rel: str) -> bytes | None:
        """The bytes of ``rel`` if it is a regular file, None if nothing is there (or a file stands
        where a folder on its path belongs); a link, FIFO or device on the way raises."""
        node = self.node(rel)
        if node.kind == "missing" or (node.blocked and node.kind == "file"):
            return None
        if node.kind != "file":
            where = self.where(node.at)
            raise UnsafePath(
                f"{where} is a {node.kind}"
                + (" where sweepgen needs a folder" if node.blocked else "; sweepgen never reads through it"),
                where=where,
                kind=node.kind,
                hint=unsafe_hint(node.kind),
            )
        return self.read(rel)

    def read(self, rel: str) -> bytes:
        """The bytes of the regular file at ``rel`` (check ``node`` first); anything else raises."""
        head, _, name = rel.rpartition("/")
        parent = self._dir_fd(head)
        try:
            if parent == _MISSING_DIR:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
            fd = os.open(name, _READ_FLAGS, dir_fd=parent)
        except OSError as err:
            raise fs_error(err, self.where(rel), "read") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # replaced between node() and here
                kind = kind_of(st.st_mode)
                raise UnsafePath(
                    f"{self.where(rel)} is a {kind}, not a regular file",
                    where=self.where(rel),
                    kind=kind,
                    hint=unsafe_hint(kind),
                )
            if st.st_size > MAX_READ_BYTES:
                raise UnsafePath(
                    f"{self.where(rel)} is {st.st_size:,} bytes, more than sweepgen reads of a file "
                    f"in a sweep folder ({MAX_READ_BYTES:,})",
                    where=self.where(rel),
                    kind="file too large",
                    hint="delete it (sweepgen writes no such file), then render the spec again",
                )
            chunks, left = [], MAX_READ_BYTES + 1  # a file grown since fstat is read cut, never whole
            while left > 0 and (chunk := os.read(fd, min(max(st.st_size, 1 << 16) + 1, left))):
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        except OSError as err:
            raise fs_error(err, self.where(rel), "read") from None
        finally:
            os.close(fd)

    def walk(self, *, folders: bool = False) -> Iterator[tuple[str, str]]:
        """``(rel, kind)`` for every entry that is not a folder (and for folders too with ``folders``),
        folders entered (never followed), sorted by path. Symlinks, FIFOs and devices are listed,
        never opened."""
        yield from self._walk(self.fd, "", folders)

    def _walk(self, fd: int, prefix: str, folders: bool) -> Iterator[tuple[str, str]]:
        """Depth first, without recursion: a committed tree 1,500 folders deep (git holds one) must
        be listed, not end the command in a RecursionError. Each level below ``fd`` holds the
        descriptor of its folder while its entries are listed."""
        levels: list[tuple[int, str, Iterator[tuple[str, bool, os.DirEntry[str]]]]] = []
        levels.append((fd, prefix, iter(self._entries(fd, prefix))))
        try:
            while levels:
                folder, at, entries = levels[-1]
                item = next(entries, None)
                if item is None:
                    levels.pop()
                    if folder != fd:
                        os.close(folder)
                    continue
                name, is_dir, entry = item
                rel = at + name
                if not is_dir:
                    found = self._kind(entry, rel)
                    if found is not None:
                        yield rel, found
                    continue
                if folders:
                    yield rel, "folder"
                sub = self._open_sub(folder, name, rel)
                levels.append((sub, rel + "/", iter(self._entries(sub, rel + "/"))))
        finally:
            for folder, _, _ in levels:
                if folder != fd:
                    os.close(folder)

    def _entries(self, fd: int, prefix: str) -> list[tuple[str, bool, os.DirEntry[str]]]:
        try:
            return sorted((e.name, e.is_dir(follow_symlinks=False), e) for e in os.scandir(fd))
        except OSError as err:
            raise fs_error(err, self.where(prefix.rstrip("/")), "list folder") from None

    def _kind(self, entry: os.DirEntry[str], rel: str) -> str | None:
        try:
            return kind_of(entry.stat(follow_symlinks=False).st_mode)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise fs_error(err, self.where(rel), "look at") from None

    def _open_sub(self, fd: int, name: str, rel: str) -> int:
        """The subfolder ``name`` of ``fd`` (at ``rel``), opened without following a link."""
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError as err:
            raise fs_error(err, self.where(rel), "open folder") from None

    # -- changing ---------------------------------------------------------------------------------

    def _make_dirs(self, rel_dir: str) -> int:
        """fd of ``rel_dir``, creating missing folders; a non-folder in the way raises UnsafePath.
        Folder by folder from the top (no recursion, as ``_dir_fd``)."""
        fd = self._dir_fd(rel_dir)
        if fd != _MISSING_DIR:
            return fd
        parts = rel_dir.split("/")
        parent = self.fd
        for depth in range(1, len(parts) + 1):
            at = "/".join(parts[:depth])
            fd = self._dir_fd(at)
            parent = fd if fd != _MISSING_DIR else self._make_one(parent, at, parts[depth - 1])
        return parent

    def _make_one(self, parent: int, rel_dir: str, name: str) -> int:
        """Create the missing folder ``name`` in ``parent`` (at ``rel_dir``) and open it."""
        blocker = self._blocked.get(rel_dir)
        if blocker is not None:
            raise UnsafePath(
                f"{self.where(blocker.at)} is a {blocker.kind} where sweepgen must create a folder",
                where=self.where(blocker.at),
                kind=blocker.kind,
                hint=unsafe_hint(blocker.kind),
            )
        _make_folder(parent, name, self.where(rel_dir))  # made meanwhile: the open refuses a non-folder
        self._dirs.pop(rel_dir, None)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as err:
            raise fs_error(err, self.where(rel_dir), "open folder") from None
        return self._remember(rel_dir, fd)

    def write(self, rel: str, data: bytes) -> None:
        """Atomically replace (or create) the file at ``rel``: temp file in its folder, then rename.

        The rename replaces a name, never writes through it; the caller has checked what was there.
        """
        head, _, name = rel.rpartition("/")
        parent = self._make_dirs(head)
        try:
            write_replace(parent, "", name, data, False)
        except OSError as err:
            raise fs_error(err, self.where(rel), "write") from None

    def place(self, src_fd: int, src_name: str, rel: str) -> None:
        """Rename the file ``src_name`` of the open folder ``src_fd`` (inside this tree, so on the same
        file system) onto ``rel``, creating its folders: an atomic replace, as ``write`` does."""
        head, _, name = rel.rpartition("/")
        parent = self._make_dirs(head)
        try:
            os.replace(src_name, name, src_dir_fd=src_fd, dst_dir_fd=parent)
        except OSError as err:
            raise fs_error(err, self.where(rel), "write") from None

    def remove(self, rel: str, *, prune: bool = True) -> None:
        """Delete the file (or link) named ``rel`` itself, then folders this emptied (not the root)."""
        head, _, name = rel.rpartition("/")
        parent = self._dir_fd(head)
        if parent == _MISSING_DIR:
            return
        try:
            os.unlink(name, dir_fd=parent)
        except FileNotFoundError:
            return
        except OSError as err:
            raise fs_error(err, self.where(rel), "delete") from None
        self._unblock(rel)
        if prune and head:
            self._prune(head)

    def _unblock(self, rel: str) -> None:
        """Forget the folders that the file ``rel``, now gone, stood in the way of."""
        for key in [k for k in self._blocked if k == rel or k.startswith(rel + "/")]:
            del self._blocked[key]
            self._dirs.pop(key, None)

    def remove_empty_folder(self, rel_dir: str) -> None:
        """Remove ``rel_dir`` and the (empty) folders inside it; a file left inside is an error."""
        subfolders = sorted(
            (rel_dir + "/" + rel for rel, kind in self._subtree(rel_dir) if kind == "folder"), reverse=True
        )
        for rel in [*subfolders, rel_dir]:  # deepest first
            head, _, name = rel.rpartition("/")
            parent = self._dir_fd(head)
            self._forget_folder(rel)
            try:
                os.rmdir(name, dir_fd=parent)
            except FileNotFoundError:
                pass
            except OSError as err:
                raise fs_error(err, self.where(rel), "remove folder") from None

    def _subtree(self, rel_dir: str) -> list[tuple[str, str]]:
        fd = self._dir_fd(rel_dir)
        if fd == _MISSING_DIR:
            return []
        return list(self._walk(fd, "", True))

    def _prune(self, rel_dir: str) -> None:
        while rel_dir:
            head, _, name = rel_dir.rpartition("/")
            parent = self._dir_fd(head)
            if parent == _MISSING_DIR:
                return
            self._forget_folder(rel_dir)  # closed first: a FUSE file system may keep an open folder alive
            try:
                os.rmdir(name, dir_fd=parent)  # only succeeds when empty
            except OSError:
                return
            rel_dir = head

    def _forget_folder(self, rel_dir: str) -> None:
        """Drop the open folders a removed ``rel_dir`` held. Compared case-folded: on a
        case-insensitive file system ``X`` was opened as the folder ``x`` that is gone now, and a new
        ``X`` must be made, not written into through the old descriptor."""
        folded = rel_dir.casefold()
        for key in [k for k in self._dirs if k.casefold() == folded or k.casefold().startswith(folded + "/")]:
            fd = self._dirs.pop(key)
            if fd != _MISSING_DIR:
                os.close(fd)

    def make_dirs_as_named(self, rel_dir: str) -> None:
        """Create each folder of ``rel_dir`` that is not stored under exactly that name (after a
        case-only rename removed ``x/``, for ``X/``). Told from the folder listing, not by opening:
        a FUSE file system may still answer ``X`` with the removed ``x`` for a moment."""
        done: list[str] = []
        for part in rel_dir.split("/") if rel_dir else []:
            if part not in self.names("/".join(done)):
                parent = self._dir_fd("/".join(done))
                # already there under another case (a file of the user's in it): written into it
                _make_folder(parent, part, self.where("/".join([*done, part])))
                self._forget_folder("/".join([*done, part]))
            done.append(part)

    def names(self, rel_dir: str) -> list[str]:
        """The names in the folder ``rel_dir`` as the file system stores them (their case); empty
        when it is missing."""
        fd = self._dir_fd(rel_dir)
        if fd == _MISSING_DIR:
            return []
        try:
            return os.listdir(fd)
        except OSError as err:
            raise fs_error(err, self.where(rel_dir), "list") from None


def _stat_or_make(pfd: int, name: str, shown: str, create: bool) -> os.stat_result | None:
    """lstat of ``name`` in the folder ``pfd``, made first as a folder where it is missing and
    ``create``; None where it is missing otherwise."""
    try:
        return os.stat(name, dir_fd=pfd, follow_symlinks=False)
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.mkdir(name, 0o777, dir_fd=pfd)
        except OSError as err:
            raise fs_error(err, shown, "create folder") from None
        return os.stat(name, dir_fd=pfd, follow_symlinks=False)
    except OSError as err:
        raise fs_error(err, shown, "open folder") from None


def _make_folder(parent: int, name: str, shown: str) -> None:
    """``mkdir`` in the folder ``parent``; a name already there is left to the caller's next step."""
    try:
        os.mkdir(name, 0o777, dir_fd=parent)
    except FileExistsError:
        pass
    except OSError as err:
        raise fs_error(err, shown, "create folder") from None


def check_rel(folder: str, rel: str) -> None:
    """``rel`` (a path a lock records below ``folder``) names a place inside it: posix, relative,
    no empty, ``.`` or ``..`` part; else ``UnsafePath``."""
    if rel.startswith("/") or any(p in ("", ".", "..") for p in rel.split("/")):
        shown = os.path.join(folder, rel)
        raise UnsafePath(
            f"{shown} leaves the folder {folder}",
            where=shown,
            kind="path",
            hint="the lock lists only paths inside its folder; restore it with `sweepgen render`",
        )


def read_inside(folder: str, rel: str) -> bytes | None:
    """The regular file ``folder/rel`` (``rel`` as a lock records it), read without following any
    symlink below ``folder``; None when nothing is there. ``..``, absolute paths, symlinks, FIFOs and
    devices raise ``UnsafePath``: a lock or a generated folder can never make sweepgen read elsewhere.
    """
    check_rel(folder, rel)
    try:
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise fs_error(err, folder, "open folder") from None
    with OutputTree(fd, folder.rstrip("/") or "/") as tree:
        return tree.read_regular(rel)


def _open_root(parent: str, shown_parent: str, *, create: bool) -> int | None:
    """The output root's descriptor (made first when ``create``), followed as the user gave it;
    None when it does not exist."""
    try:
        if create:
            os.makedirs(parent, exist_ok=True)
        return os.open(parent, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except FileNotFoundError:
        return None
    except FileExistsError as err:  # makedirs: a file where the output root should be
        raise fs_error(
            OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)), shown_parent, "create folder"
        ) from err
    except OSError as err:
        raise fs_error(err, shown_parent, "open folder") from None
