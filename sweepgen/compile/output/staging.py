"""Rendered files written as they are rendered: the staged half of a render's transaction.

A render writes each file, as soon as it is rendered (by whichever render worker rendered it), into
the sweep folder under a temporary name ``.staged.sweepgen-<pid>-<index>.tmp``; only its path, sha256
and run dir stay in memory. The files it replaces are not touched until every spec compiled and
``writer.plan_actions`` accepted the plan; ``writer.apply`` then writes the journal and renames each
staged file onto its path (an atomic replace, within one folder for outputs at the top of the sweep
folder, as ``OutputTree.write`` does). On any error before that, the staged files are deleted (and
the sweep folder, if this render created it), so nothing is written. A render killed while staging
leaves temporary files that ``check`` reports as an interrupted render and the next render deletes
(``writer``'s leftovers), next to the untouched files and lock of the previous render.

Staging holds the sweep folder's lock (``OutputTree.hold``) from the first staged file to the end of
``apply``: one render per sweep folder at a time.
"""

from __future__ import annotations

import contextlib
import os

from sweepgen.errors import Location, UserError
from sweepgen.fs.outtree import OutputTree
from sweepgen.fs.safefs import TEMP_PREFIX, fs_error, write_new


class Staging:
    """One sweep folder's staged files; ``open`` it before the workers fork (they inherit it)."""

    def __init__(self, tree: OutputTree, made: list[str]) -> None:
        self.tree = tree  # the sweep folder, held
        self.made = made  # folders this render created for it, deepest first (removed on abort)
        # a temp name (safefs.TEMP_NAME) that no other writer uses: `.staged.` before the usual one
        self.prefix = f".staged{TEMP_PREFIX}{os.getpid()}-"
        self._open = True

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
        if not tree.hold():
            tree.close()
            _remove_folders(made)
            raise UserError(
                f"another sweepgen render is writing {shown_dir}",
                location=Location(shown_dir),
                hint="wait for it to finish, then render again",
            )
        staging = cls(tree, made)
        staging.clear()  # a dead render's, whose pid was this one: the folder is held, no one writes
        return staging

    def name(self, index: int) -> str:
        return f"{self.prefix}{index}.tmp"

    def owns(self, rel: str) -> bool:
        """Whether ``rel`` (a path in the sweep folder) is one of this render's staged files."""
        return rel.startswith(self.prefix)

    def write(self, index: int, out_path: str, data: bytes) -> None:
        """Stage the bytes of output ``index`` (``out_path``, for messages); runs in render workers."""
        try:
            write_new(self.tree.fd, self.name(index), data)
        except OSError as err:
            # a plain UserError: it crosses from a render worker by its class name (parallel._rebuild)
            fault = fs_error(err, self.tree.where(out_path), "write")
            raise UserError(fault.message, location=fault.location, hint=fault.hint) from None

    def commit(self, index: int, out_path: str) -> None:
        """Rename the staged file of output ``index`` onto ``out_path`` (atomically replacing it)."""
        self.tree.place(self.tree.fd, self.name(index), out_path)

    def clear(self) -> None:
        """Delete the staged files that are left (the outputs that did not change)."""
        if not self._open:
            return
        with os.scandir(self.tree.fd) as entries:
            names = [e.name for e in entries if e.name.startswith(self.prefix)]
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=self.tree.fd)

    def finish(self) -> None:
        """Delete what is left staged and release the sweep folder."""
        self.clear()
        self.close()

    def abort(self) -> None:
        """Undo the staging: its files, and the folders this render created."""
        if not self._open:
            return
        self.finish()
        _remove_folders(self.made)

    def close(self) -> None:
        self._open = False
        self.tree.close()


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
