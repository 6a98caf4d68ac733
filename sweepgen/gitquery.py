"""The one way sweepgen asks git a question about a work tree: read-only, bounded, never a hook.

Two parts ask git: `check` (which leftovers beside generated output git ignores) and `run` (whether
git tracks a recorded command file). Both run in repositories a pull request may come from, so the
call is fixed here once: ``core.fsmonitor`` off (a repository's config would otherwise start the
program it names), no optional locks (a query never writes the index), a deadline, and a missing git
or a folder outside a work tree read as "git says nothing" rather than as an error.

Inside a work tree, git's silence is not an answer: ``tracked`` says "cannot tell" (None) when git
fails, is missing or overruns there (a repository git refuses, a foreign owner, a corrupt index),
so that a caller guarding against committed files fails closed. And git opens files by path that a
shared folder may hold as FIFOs (``.gitignore`` on the way to a path, ``.git/config``, ``index``,
``HEAD``, ``info/exclude``): opening a FIFO blocks git until the deadline, so those are checked
first (``lstat``) and a FIFO, device or socket there is exit 2 naming it. A git that overran once
is not asked again in the same command, so one stall costs one deadline.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

from sweepgen.errors import Location, UserError

_DEADLINE_S = 30
_stalled: list[bool] = []  # git overran once in this process: asking again would stall again
_GIT_FILES = ("config", "index", "HEAD", os.path.join("info", "exclude"))


def _ask(folder: str, args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes] | None:
    """``git -C folder ARGS`` with ``stdin``; None when git is missing, fails to start or overruns."""
    if shutil.which("git") is None or _stalled:
        return None
    try:
        return subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-C", folder, *args],
            input=stdin,
            capture_output=True,
            timeout=_DEADLINE_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except subprocess.TimeoutExpired:
        _stalled.append(True)
        return None
    except OSError:
        return None


def work_tree(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` (resolved) holding ``.git``; None outside git."""
    here = os.path.realpath(folder)
    while not os.path.lexists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return here


def _refuse_blocking(path: str) -> None:
    """Exit 2 when ``path`` (a file git opens) is a FIFO, device or socket: git would block on it."""
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return  # absent (or unnamable): git skips it too
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return
    raise UserError(
        f"{path} is not a regular file: git opens it by path and would wait on it forever",
        location=Location(path),
        hint="delete it (a FIFO, device or socket has no place where git reads its files)",
    )


def _refuse_blocking_files(top: str, folder: str, rels: list[str]) -> None:
    """The files git opens to answer about ``rels`` under ``folder`` in the work tree ``top``."""
    dot_git = os.path.join(top, ".git")
    _refuse_blocking(dot_git)
    if os.path.isdir(dot_git) and not os.path.islink(dot_git):
        for name in _GIT_FILES:
            _refuse_blocking(os.path.join(dot_git, name))
    real = os.path.realpath(folder)
    folders = {top}
    below = os.path.relpath(real, top).split(os.sep) if real != top else []
    for depth in range(len(below)):
        folders.add(os.path.join(top, *below[: depth + 1]))
    for rel in rels:
        parts = rel.split("/")[:-1]
        for depth in range(len(parts)):
            folders.add(os.path.join(real, *parts[: depth + 1]))
    for each in sorted(folders):
        _refuse_blocking(os.path.join(each, ".gitignore"))


def tracked(folder: str, name: str) -> bool | None:
    """True when git tracks ``name`` in ``folder``, False when it does not or ``folder`` is outside
    every work tree; None inside a work tree when git cannot tell (fails, is missing, overruns)."""
    top = work_tree(folder)
    if top is not None:
        _refuse_blocking_files(top, folder, [])
    done = _ask(folder, ["ls-files", "--error-unmatch", "--", name])
    if done is not None and done.returncode in (0, 1):  # 1: "did not match any file known to git"
        return done.returncode == 0
    return False if top is None else None


def ignored(folder: str, rels: list[str]) -> set[str]:
    """The paths among ``rels`` (relative to ``folder``) that git ignores there; empty outside git."""
    if not rels:
        return set()
    top = work_tree(folder)
    if top is not None:
        _refuse_blocking_files(top, folder, rels)
    # names as bytes: a file name that is not UTF-8 is held as surrogates (os.fsencode undoes it)
    done = _ask(folder, ["check-ignore", "-z", "--stdin"], b"".join(os.fsencode(r) + b"\0" for r in rels))
    if done is None or done.returncode not in (0, 1):  # 128: not a work tree (or git failed)
        return set()
    return {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}
