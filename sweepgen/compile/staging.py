"""Rendered files written as they are rendered: the staging folder of a render's transaction.

A render writes each file, as soon as it is rendered (by whichever render worker rendered it), into a
staging folder inside the sweep folder, ``generated/<name>/.sweepgen-<pid>-<n>.tmp/<index // 1024>/``,
under a temporary name ``.sweepgen-<pid>-<index>.tmp``; only its path, sha256 and run dir stay in
memory. (Workers render contiguous runs of variants, so each mostly creates files in its own
sub-folder rather than both contending for one folder's lock.) The
files it replaces are not touched until every spec compiled and ``writer.plan_actions`` accepted the
plan; ``writer.apply`` then writes the journal and renames each staged file onto its path (an atomic
replace). On any error before that, the staging folder is deleted (and the sweep folder, if this
render created it), so nothing is written. A render killed while staging leaves temporary files that
``check`` reports as an interrupted render and the next render deletes (``writer``'s leftovers),
next to the untouched files and lock of the previous render.

The staging folder holds the sweep folder's lock (``OutputTree.hold``) from the first staged file to
the end of ``apply``: one render per sweep folder at a time.
"""

from __future__ import annotations

import contextlib
import itertools
import os

from sweepgen.errors import Location, UserError
from sweepgen.outtree import OutputTree
from sweepgen.safefs import TEMP_PREFIX, fs_error, write_new

_counter = itertools.count()
_BUCKET = 1024  # staged files per sub-folder
_DIR_FLAGS = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


class Staging:
    """One sweep folder's staging folder; ``open`` it before the workers fork (they inherit it)."""

    def __init__(self, tree: OutputTree, folder: str, fd: int, made: list[str]) -> None:
        self.tree = tree  # the sweep folder, held
        self.folder = folder  # the staging folder's name inside it
        self.fd = fd
        self.made = made  # folders this render created for it, deepest first (removed on abort)
        self.pid = os.getpid()
        self._bucket: tuple[int, int] | None = None  # (bucket, fd) of the sub-folder last used

    @property
    def fresh(self) -> bool:
        """Whether the sweep folder did not exist before this render (it holds nothing else)."""
        return bool(self.made)

    @classmethod
    def open(cls, sweep_dir: str, shown_dir: str) -> Staging:
        parent, name = os.path.split(sweep_dir)
        made = _missing(sweep_dir)
        tree = OutputTree.open(parent, name, shown_dir, create=True)
        assert tree is not None  # created
        try:
            if not tree.hold():
                raise UserError(
                    f"another sweepgen render is writing {shown_dir}",
                    location=Location(shown_dir),
                    hint="wait for it to finish, then render again",
                )
            while True:
                folder = f"{TEMP_PREFIX}{os.getpid()}-{next(_counter)}.tmp"
                try:
                    fd = tree.new_folder(folder)
                    break
                except FileExistsError:  # a leftover of an earlier process with the same pid
                    continue
        except BaseException:
            tree.close()
            _remove_folders(made)
            raise
        return cls(tree, folder, fd, made)

    def name(self, index: int) -> str:
        return f"{TEMP_PREFIX}{self.pid}-{index}.tmp"

    def write(self, index: int, out_path: str, data: bytes) -> None:
        """Stage the bytes of output ``index`` (``out_path``, for messages); runs in render workers."""
        try:
            write_new(self._bucket_fd(index, create=True), self.name(index), data)
        except OSError as err:
            # a plain UserError: it crosses from a render worker by its class name (parallel._rebuild)
            fault = fs_error(err, self.tree.where(out_path), "write")
            raise UserError(fault.message, location=fault.location, hint=fault.hint) from None

    def commit(self, index: int, out_path: str) -> None:
        """Rename the staged file of output ``index`` onto ``out_path`` (atomically replacing it)."""
        self.tree.place(self._bucket_fd(index, create=False), self.name(index), out_path)

    def _bucket_fd(self, index: int, *, create: bool) -> int:
        bucket = index // _BUCKET
        if self._bucket is not None and self._bucket[0] == bucket:
            return self._bucket[1]
        self._close_bucket()
        name = str(bucket)
        if create:
            with contextlib.suppress(FileExistsError):  # made by another worker
                os.mkdir(name, 0o777, dir_fd=self.fd)
        fd = os.open(name, _DIR_FLAGS, dir_fd=self.fd)
        self._bucket = (bucket, fd)
        return fd

    def _close_bucket(self) -> None:
        if self._bucket is not None:
            os.close(self._bucket[1])
            self._bucket = None

    def finish(self) -> None:
        """Delete what is left in the staging folder (the files that did not change), the folder,
        and release the sweep folder."""
        self.clear()
        self.close()

    def abort(self) -> None:
        """Undo the staging: its files and folder, and the folders this render created."""
        if self.fd < 0:
            return
        self.finish()
        _remove_folders(self.made)

    def close(self) -> None:
        self._close_bucket()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self.tree.close()

    def clear(self) -> None:
        """Delete the staging folder and what is left in it (only files and sub-folders this
        process made, in a folder it made)."""
        if self.fd < 0:
            return
        self._close_bucket()
        with os.scandir(self.fd) as entries:
            buckets = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
        for bucket in buckets:
            fd = os.open(bucket, _DIR_FLAGS, dir_fd=self.fd)
            try:
                with os.scandir(fd) as entries:
                    names = [e.name for e in entries]
                for name in names:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name, dir_fd=fd)
            finally:
                os.close(fd)
            with contextlib.suppress(OSError):
                os.rmdir(bucket, dir_fd=self.fd)
        with contextlib.suppress(OSError):  # not empty: something else was put there, leave it
            os.rmdir(self.folder, dir_fd=self.tree.fd)


def _missing(path: str) -> list[str]:
    """The folders of ``path`` (itself included) that do not exist yet, deepest first."""
    out = []
    while path and not os.path.lexists(path):
        out.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return out


def _remove_folders(folders: list[str]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):  # only if still empty
            os.rmdir(folder)
