"""The one way sweepgen asks git a question about a work tree: read-only, bounded, never a hook.

Two parts ask git: `check` (which leftovers beside generated output git ignores) and `run` (whether
git tracks a recorded command file). Both run in repositories a pull request may come from, so the
call is fixed here once: ``core.fsmonitor`` off (a repository's config would otherwise start the
program it names), no optional locks (a query never writes the index), a deadline, and a missing git
or a folder outside a work tree read as "git says nothing" rather than as an error.
"""

from __future__ import annotations

import os
import shutil
import subprocess

_DEADLINE_S = 60


def _ask(folder: str, args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes] | None:
    """``git -C folder ARGS`` with ``stdin``; None when git is missing, fails to start or overruns."""
    if shutil.which("git") is None:
        return None
    try:
        return subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-C", folder, *args],
            input=stdin,
            capture_output=True,
            timeout=_DEADLINE_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def tracked(folder: str, name: str) -> bool:
    """True when git tracks ``name`` in ``folder`` (False outside a work tree or without git)."""
    done = _ask(folder, ["ls-files", "--error-unmatch", "--", name])
    return done is not None and done.returncode == 0


def ignored(folder: str, rels: list[str]) -> set[str]:
    """The paths among ``rels`` (relative to ``folder``) that git ignores there; empty outside git."""
    if not rels:
        return set()
    # names as bytes: a file name that is not UTF-8 is held as surrogates (os.fsencode undoes it)
    done = _ask(folder, ["check-ignore", "-z", "--stdin"], b"".join(os.fsencode(r) + b"\0" for r in rels))
    if done is None or done.returncode not in (0, 1):  # 128: not a work tree (or git failed)
        return set()
    return {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}
