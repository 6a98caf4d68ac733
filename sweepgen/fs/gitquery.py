"""The one way sweepgen asks git a question about a work tree: read-only, bounded, never a hook.

Three parts ask git: `check` (which leftovers beside generated output git ignores), `run` (whether
git tracks a recorded command file) and `report` (which run folders hold files git tracks). All run
in repositories a pull request may come from, so the call is fixed here once: ``core.fsmonitor``
off (a repository's config would otherwise start the program it names), no optional locks (a
query never writes the index), a deadline, and a missing git or a folder outside a work tree read
as "git says nothing" rather than as an error.

Inside a work tree, git's silence is not an answer: ``tracked`` says "cannot tell" (None) when git
fails, is missing or overruns there (a repository git refuses, a foreign owner, a corrupt index),
so that a caller guarding against committed files fails closed. And git opens files by path that a
shared folder may hold as FIFOs (``.gitignore`` on the way to a path, ``.git/config``, ``index``,
``HEAD``, ``info/exclude``, and the files git's config names: includes, ``core.excludesFile``):
opening a FIFO blocks git until the deadline, so those are checked first (links followed, as git
follows them) and a FIFO, device or socket there is exit 2 naming it. A git that overran once
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


def _ask(
    folder: str, args: list[str], stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes] | None:
    """``git -C folder ARGS`` with ``stdin`` (and ``env`` added); None when git is missing, fails to
    start or overruns."""
    if shutil.which("git") is None or _stalled:
        return None
    try:
        return subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-C", folder, *args],
            input=stdin,
            capture_output=True,
            timeout=_DEADLINE_S,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", **(env or {})},
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
    """Exit 2 when ``path`` (a file git opens) is, or links to, a FIFO, device or socket: git would
    block on it (git follows a link at .git/config or at a path its config names)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return  # absent, a dangling link (or unnamable): git skips it too
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
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
    below = os.path.relpath(real, top).split(os.sep) if real != top else []
    folders = {top, *_folders_on_the_way(top, below)}
    for rel in rels:
        folders.update(_folders_on_the_way(real, rel.split("/")[:-1]))
    for each in sorted(folders):
        _refuse_blocking(os.path.join(each, ".gitignore"))
    _refuse_config_named(top)


def _folders_on_the_way(base: str, parts: list[str]) -> list[str]:
    """``base/a``, ``base/a/b``... for ``parts`` ``[a, b, ...]``: each folder git reads a .gitignore in."""
    return [os.path.join(base, *parts[: depth + 1]) for depth in range(len(parts))]


# keys whose value is a file git opens for ls-files and check-ignore (measured with strace, git
# 2.39): an include (plain or conditional), and the excludes file; core.attributesFile is not read
_NAMED_KEYS = r"^include\.path$|^includeif\..*\.path$|^core\.excludesfile$"
_INCLUDE_DEPTH = 10  # git's own limit on nested includes
# work trees whose config files were found clear in this process: `check` asks git once per sweep
# folder, and reading the configs costs a git process each
_configs_checked: set[str] = set()


def _refuse_config_named(top: str) -> None:
    """Exit 2 when a file git's config names (an include, at any depth, or core.excludesFile) is a
    FIFO, device or socket. A pull request cannot write .git/config, but it can commit a link at a
    work-tree path a team's config names (`include.path = ../team.gitconfig`). git reads includes
    while it finds the repository, before any command runs, so each config file is read here alone
    (``_config_entries``), its includes checked before they are read in turn, whatever their
    condition."""
    if top in _configs_checked:
        return
    pending = [(path, 0) for path in (*_global_configs(), _local_config(top))]
    excludes = False
    seen: set[str] = set()
    while pending:
        path, depth = pending.pop()
        if path in seen or depth > _INCLUDE_DEPTH:
            continue
        seen.add(path)
        _refuse_blocking(path)
        excludes |= _check_named(path, depth, top, pending)
    if not excludes:  # git's default excludes file
        _refuse_blocking(os.path.join(_config_home(), "git", "ignore"))
    _configs_checked.add(top)


def _check_named(path: str, depth: int, top: str, pending: list[tuple[str, int]]) -> bool:
    """The files one config file names: its excludes file refused now (git opens it for each
    command), its includes added to ``pending`` (each is checked before it is read in turn).
    True when it set core.excludesFile, which replaces git's default one."""
    excludes = False
    for key, value in _config_entries(path) if os.path.isfile(path) else []:
        if key == "core.excludesfile":  # relative to the work tree, where git runs
            excludes = True
            _refuse_blocking(os.path.join(top, os.path.expanduser(value)))
        else:  # an include: relative to the file that names it
            pending.append((os.path.join(os.path.dirname(path), os.path.expanduser(value)), depth + 1))
    return excludes


def _config_home() -> str:
    return os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser(os.path.join("~", ".config"))


def _global_configs() -> list[str]:
    """The user's config files git reads (the system's is the machine's, no pull request's)."""
    named = os.environ.get("GIT_CONFIG_GLOBAL")
    if named:
        return [named]
    return [
        os.path.expanduser(os.path.join("~", ".gitconfig")),
        os.path.join(_config_home(), "git", "config"),
    ]


def _local_config(top: str) -> str:
    """The repository's config file: in ``.git/``, or for a linked work tree (``.git`` a file
    saying ``gitdir: ...``) in the common folder its ``commondir`` names."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return os.path.join(dot_git, "config")
    first = _small_text(dot_git).partition("\n")[0]
    git_dir = os.path.join(top, first.removeprefix("gitdir:").strip())
    common = _small_text(os.path.join(git_dir, "commondir")).strip()
    return os.path.join(git_dir, common, "config") if common else os.path.join(git_dir, "config")


def _small_text(path: str) -> str:
    """The first KiB of a regular file (``.git``, ``commondir``: a line each), else empty."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return ""
    try:
        return os.read(fd, 1024).decode("utf-8", "replace") if stat.S_ISREG(os.fstat(fd).st_mode) else ""
    finally:
        os.close(fd)


def _config_entries(config_file: str) -> list[tuple[str, str]]:
    """(key, value) of every ``_NAMED_KEYS`` entry written in ``config_file`` itself: read by git
    with no repository (``GIT_DIR`` names none, so the repository's config and its includes are not
    read first) and no include followed."""
    args = ["config", "--file", config_file, "--no-includes", "-z", "--get-regexp", _NAMED_KEYS]
    done = _ask(os.path.dirname(config_file) or ".", args, env={"GIT_DIR": os.path.join(os.devnull, "none")})
    if done is None or done.returncode != 0:  # 1: none set
        return []
    entries = [os.fsdecode(f).partition("\n") for f in done.stdout.split(b"\0")[:-1]]
    return [(key, value) for key, nl, value in entries if nl]


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


def tracked_below(folder: str) -> set[str] | None:
    """The files git tracks below ``folder`` (paths relative to it); empty outside every work tree,
    None inside one when git cannot tell (fails, is missing, overruns)."""
    top = work_tree(folder)
    if top is None:
        return set()
    _refuse_blocking_files(top, folder, [])
    done = _ask(folder, ["ls-files", "-z", "--", "."])
    if done is None or done.returncode != 0:
        return None
    return {os.fsdecode(p) for p in done.stdout.split(b"\0") if p}
