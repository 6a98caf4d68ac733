"""The one rule for every path that comes from a file's contents: it stays inside the project.

A lock, a status file, ``[tool.sweepgen]`` or a generated config is data that a pull request or a
shared runs folder may have written. A path read from one (``output``, ``specs`` globs, a lock's
inputs, a run's ``output_dir``/``run_dir``, a status file's ``sweep_dir``) is used only when it is
relative, has no ``..`` that climbs out, and, links resolved, lies inside the project root; the
project root is chosen by the person running sweepgen (the working directory, the folder of their
pyproject.toml, a command-line argument), never widened by what a file says.
"""

from __future__ import annotations

import os

from sweepgen.errors import ConfigError, Location


def within(path: str, root: str) -> bool:
    """Is ``path`` ``root`` or below it? Both absolute and already resolved."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def lexically_inside(path: str) -> bool:
    """A relative path with no NUL that does not climb out of its base (``a/../b`` is fine)."""
    if not path or "\0" in path or os.path.isabs(path) or path.startswith("~"):
        return False
    norm = os.path.normpath(path)
    return norm != ".." and not norm.startswith(".." + os.sep)


def resolve_inside(root: str, path: str) -> str | None:
    """``path`` (relative to ``root``) resolved, links included, when it lies inside ``root`` (also
    resolved); None when it is absolute, climbs out, or a link on the way leads out."""
    if not lexically_inside(path):
        return None
    real_root = os.path.realpath(root)
    try:
        real = os.path.realpath(os.path.join(real_root, path))
    except (ValueError, OSError):
        return None
    return real if within(real, real_root) else None


def in_git_folder(path: str, root: str) -> bool:
    """Does ``path`` lie in a ``.git`` folder at or below ``root`` (both absolute, resolved)? git's
    own files (hooks, config, refs) are never a place to write: a ``.git/hooks/pre-commit`` or a
    ``config`` with ``core.fsmonitor`` written there would be run by git."""
    return names_git_folder(os.path.relpath(path, root))


def names_git_folder(rel: str) -> bool:
    """Does the relative path ``rel`` (``/`` or the OS's separator) pass through a ``.git`` folder,
    in any case (one folder on macOS and Windows)?"""
    return any(part.casefold() == ".git" for part in rel.replace(os.sep, "/").split("/"))


PROJECT_MARKERS = (".git", "pyproject.toml")


def project_root(start: str = ".") -> str | None:
    """The project a command runs in, as the person running it placed themselves: the nearest folder
    at or above ``start`` (resolved) holding ``.git`` or ``pyproject.toml``; None when there is none.
    Chosen from where the command runs, never from a file's contents."""
    folder = os.path.realpath(start)
    while True:
        if any(os.path.lexists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def refuse(
    what: str,
    value: str,
    *,
    key: str,
    source: str | Location,
    root: str,
    hint: str | None = None,
) -> ConfigError:
    """The exit-2 error for a path from ``source`` (a file, or the place in it) that leads outside
    ``root``."""
    return ConfigError(
        f"{what} {value!r} leads outside the project {root}",
        location=source if isinstance(source, Location) else Location(source),
        key=key,
        hint=hint
        or "paths read from files must be relative and stay inside the project (no `..` out, no "
        "absolute path, no link that leads out); move the folder inside the project",
    )
