"""Where ``diff --resolve-bases`` may look for a base: inside the project of the file it was given.

The two files named on the command line are trusted; the bases they name (mmengine ``_base_``,
relative imports, Hydra/NeMo-RL ``defaults:``) are text a pull request wrote, so a base is a path
from a file's contents and follows ``sweepgen.fs.confine``'s rule: resolved (``..`` and links at any
level), it lies inside the project of the file named on the command line, or the diff ends with
exit 2 naming the file that lists it. Without that, ``_base_ = '../../secret.yaml'`` (or a committed
link) would print another file's values into a CI log.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sweepgen.errors import ConfigError, Location
from sweepgen.fs import confine
from sweepgen.fs.safefs import kind_of


def root_of(named: str | Path) -> str:
    """The project of a config named on the command line: the nearest folder at or above it holding
    ``.git`` or ``pyproject.toml``; without one, the working directory when the config lies below
    it (``configs/a/x.py`` may name ``../_base_/m.py``), else the config's own folder."""
    folder = os.path.dirname(os.path.realpath(named))
    here = os.path.realpath(os.getcwd())
    return confine.project_root(folder) or (here if confine.within(folder, here) else folder)


MAX_FILES = 2_000  # files one --resolve-bases side reads: real chains read tens, a few hundred at most


class Project:
    """The folder every base of one diffed file must stay in, and how many more files it may read:
    a base listed twice in every file of a chain (`defaults: [b, b]`) is read 2^depth times."""

    def __init__(self, named: str | Path) -> None:
        self.root = root_of(named)
        self.left = MAX_FILES

    def inside(self, target: Path, *, named: str, source: Path, line: int = 0) -> Path:
        return confined(target, self.root, named=named, source=source, line=line)

    def holds_file(self, target: Path, *, named: str, source: Path, line: int = 0) -> bool:
        """Whether the base ``named`` in ``source`` is there, inside the project, as a regular file:
        False when nothing is there; a FIFO, device, socket or folder is exit 2 saying what it is
        (read, a FIFO would block the diff; reported missing, it would send the person looking for
        a file that is there)."""
        try:
            mode = os.stat(self.inside(target, named=named, source=source, line=line)).st_mode
        except (OSError, ValueError):
            return False
        if stat.S_ISREG(mode):
            return True
        raise ConfigError(
            f"base {named!r} is a {kind_of(mode)}, not a file (looked at {target}); never read",
            location=Location(str(source), line),
            hint="a base must be a regular file: replace it with one, or diff without --resolve-bases",
        )

    def spend(self, path: Path) -> None:
        """Count one more file read; past ``MAX_FILES`` the diff ends with exit 2 at ``path``."""
        self.left -= 1
        if self.left < 0:
            raise ConfigError(
                f"--resolve-bases read more than {MAX_FILES:,} base files",
                location=Location(str(path)),
                hint="a base listed again and again (in every file of a chain) is read that many "
                "times; list each base once, or diff without --resolve-bases",
            )


def confined(target: Path, root: str, *, named: str, source: Path, line: int = 0) -> Path:
    """``target`` (the base ``named`` in ``source``) when, links resolved, it lies inside ``root``."""
    try:
        real = os.path.realpath(target)
    except (OSError, ValueError):  # a NUL in the name, a loop of links
        real = ""
    if real and confine.within(real, root):
        return target
    raise ConfigError(
        f"base {named!r} leads outside the project {root}",
        location=Location(str(source), line),
        hint="bases are read only inside the project of the file diffed (no `..` out, no absolute "
        "path elsewhere, no link that leads out); copy the base into the project",
    )
