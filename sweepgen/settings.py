"""The project's one setting, ``[tool.sweepgen]`` in pyproject.toml: where specs and output live.

```toml
[tool.sweepgen]
specs = ["experiments/**/*.sweep.yaml"]   # globs, relative to pyproject.toml
output = "out"                            # the output root (default: generated)
limits = {variants = 2000000}             # ceilings a spec cannot raise (time: only --limit)
```

``check`` and ``render`` with no spec argument, the output root of every command that has ``-o``,
orphan detection and the pre-commit hook (which runs ``sweepgen check`` with no arguments) read it,
so CI, the hook and a person at the terminal check the same specs. The nearest pyproject.toml at or
above the working directory that has the table wins. Without one, specs are what the hook matches
by default (any YAML under a ``specs/`` folder, any ``*.sweep.yaml``) and the output root is
``generated/`` in the working directory. An explicit argument (``-o``, spec paths) always wins.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import os
import stat
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.formats.tomllines import error_place, key_place
from sweepgen.fs import regular
from sweepgen.fs.confine import in_git_folder, lexically_inside, refuse, resolve_inside, within
from sweepgen.fs.safefs import kind_of, walk

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_SPECS = ("**/specs/**/*.yaml", "**/specs/**/*.yml", "**/*.sweep.yaml", "**/*.sweep.yml")
DEFAULT_OUTPUT = "generated"
_KEYS = {"specs", "output", "limits"}
# The specs globs are walked by sweepgen itself, never by `glob` (which follows linked folders and
# takes an absolute pattern anywhere): inside the project only, links not followed, hidden folders
# and the output root skipped, and bounded, so a pattern cannot make `check` walk a whole disk.
MAX_WALK_ENTRIES = 200_000
MAX_WALK_SECONDS = 20.0
MAX_PYPROJECT_BYTES = 4 << 20  # a pyproject.toml is a few KB
_TOML_HINT = "fix pyproject.toml (it must be UTF-8 TOML: https://toml.io), or run from a folder without it"


@dataclass(frozen=True)
class Settings:
    specs: tuple[str, ...]  # globs, relative to ``root``
    output: str  # relative to ``root``
    root: str  # the folder of the pyproject.toml that set them, or the working directory
    source: str | None  # that pyproject.toml as the user reads it; None: the defaults
    limits: dict[str, Any] = field(default_factory=dict)  # ceilings (sweepgen.compile.spec.limits)

    def where(self, *keys: str) -> Location:
        """The line and column of ``[tool.sweepgen]``'s ``keys`` in the pyproject.toml that set them."""
        return where(self.source, *keys) if self.source else Location("pyproject.toml")

    def output_root(self) -> str:
        """The output root as a path from the working directory."""
        return _shown(os.path.join(self.root, self.output))

    def spec_files(self) -> list[str]:
        """Every spec the globs match (hidden folders skipped), sorted, each once, as paths from the
        working directory; the output root is never searched, links are never followed, and the walk
        is bounded (``MAX_WALK_ENTRIES``, ``MAX_WALK_SECONDS``)."""
        out_abs = os.path.abspath(os.path.join(self.root, self.output))
        budget = _Budget(self.source or self.root)
        found: set[str] = set()
        for pattern in self.specs:
            fixed, parts = _fixed_head(pattern)
            start = os.path.join(self.root, *fixed)
            if resolve_inside(self.root, os.path.join(*fixed) if fixed else ".") is None:
                continue  # a fixed folder that is a link out of the project: never walked
            found.update(_walk(start, parts, out_abs, budget))
        return sorted(_shown(p) for p in found)


def _fixed_head(pattern: str) -> tuple[list[str], list[str]]:
    """A glob's leading folders without wildcards (where the walk starts), and the rest."""
    parts = pattern.replace(os.sep, "/").strip("/").split("/")
    fixed = []
    while len(parts) > 1 and not _magic(parts[0]):
        fixed.append(parts.pop(0))
    return fixed, parts


def load(cwd: str | None = None) -> Settings:
    """The settings in force at ``cwd`` (default: the working directory)."""
    here = os.path.abspath(cwd or os.getcwd())
    path = _find(here)
    if path is None:
        return Settings(DEFAULT_SPECS, DEFAULT_OUTPUT, here, None)
    table = _table(path)
    assert table is not None  # _find only returns files that have the table
    shown = _shown(path)
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise UserError(
            f"[tool.sweepgen] has unknown key(s) {', '.join(unknown)}",
            location=where(shown, unknown[0]),
            hint="known keys: specs (a list of globs), output (the output root), limits (a table)",
        )
    root = os.path.dirname(path)
    specs = _specs(table, shown, root)
    output = _output(table, shown, root)
    limits = table.get("limits", {})
    if not isinstance(limits, dict):
        raise UserError(
            "[tool.sweepgen] limits must be a table of limit = number",
            location=where(shown, "limits"),
            hint="e.g. limits = {variants = 2000000, yaml_nodes = 20000000}",
        )
    return Settings(tuple(specs), output, root, shown, limits)


def _output(table: dict[str, Any], shown: str, root: str) -> str:
    """``output``: a folder name. Resolved (links and `..`), the output root, where render writes
    and deletes, must be a folder below pyproject.toml's, never that folder itself or outside it."""
    output = table.get("output", DEFAULT_OUTPUT)
    if not isinstance(output, str) or not output:
        raise UserError(
            "[tool.sweepgen] output must be a folder name (a string)",
            location=where(shown, "output"),
            hint='e.g. output = "generated"',
        )
    real = resolve_inside(root, output)
    if real is not None and in_git_folder(real, os.path.realpath(root)):
        raise ConfigError(
            f"[tool.sweepgen] output {output!r} lies in git's own .git folder",
            location=where(shown, "output"),
            key="tool.sweepgen.output",
            hint="git runs what its folder holds (hooks, config): name a folder of the work tree, "
            'e.g. output = "generated"',
        )
    if real is None or real == os.path.realpath(root):
        raise refuse(
            "[tool.sweepgen] output",
            output,
            key="tool.sweepgen.output",
            source=where(shown, "output"),
            root=_shown(root),
            hint='the output root is a folder inside the project, e.g. output = "generated"; to '
            "render elsewhere, say so on the command line (-o DIR)",
        )
    return output


def _specs(table: dict[str, Any], shown: str, root: str) -> list[str]:
    """``specs``: a non-empty list of globs (one string is a list of one), each inside the project."""
    specs = table.get("specs", list(DEFAULT_SPECS))
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, list) or not specs or not all(isinstance(s, str) and s for s in specs):
        raise UserError(
            "[tool.sweepgen] specs must be a non-empty list of glob strings",
            location=where(shown, "specs"),
            hint='e.g. specs = ["experiments/**/*.sweep.yaml"]',
        )
    for pattern in specs:
        _check_inside(pattern, shown, root)
    return specs


def _check_inside(pattern: str, shown: str, root: str) -> None:
    """A specs glob stays inside the project: relative, and no ``..`` anywhere in it."""
    if not lexically_inside(pattern) or ".." in pattern.replace(os.sep, "/").split("/"):
        raise refuse(
            "[tool.sweepgen] specs pattern",
            pattern,
            key="tool.sweepgen.specs",
            source=where(shown, "specs"),
            root=_shown(root),
            hint="spec globs are relative to pyproject.toml and stay inside its folder, "
            'e.g. specs = ["experiments/**/*.sweep.yaml"]',
        )


def _find(start: str) -> str | None:
    folder = start
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if _table(candidate) is not None:
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _table(path: str) -> dict[str, Any] | None:
    shown = _shown(path)
    raw = _read(path, shown)
    if raw is None:
        return None
    return copy.deepcopy(_parsed_table(raw, shown))


@functools.lru_cache(maxsize=16)
def _parsed_table(raw: bytes, shown: str) -> dict[str, Any] | None:
    """``[tool.sweepgen]`` of pyproject.toml's bytes, parsed once per content: every command reads
    the file again (an edit is seen), but the in-process commands of one process (each test's
    render and check, run from a checkout whose own pyproject.toml is 16 KB of TOML without the
    table) no longer parse the same bytes again each time. A refusal is raised, never cached."""
    data = _parse_toml(raw, shown)
    table = data.get("tool", {}).get("sweepgen") if isinstance(data.get("tool"), dict) else None
    if table is not None and not isinstance(table, dict):
        raise UserError("[tool.sweepgen] must be a table", location=where(shown))
    return table


def _read(path: str, shown: str) -> bytes | None:
    """pyproject.toml's first bytes, the file opened without following a link and used only when it
    is a regular file; None when there is none (or it cannot be read). The checkout's pyproject.toml
    is a pull request's: a committed link would make every command read (and obey) a file elsewhere,
    and a FIFO would block, so either is exit 2 naming it, as is one past MAX_PYPROJECT_BYTES
    (``regular.read``)."""
    try:
        return regular.read(path, limit=MAX_PYPROJECT_BYTES, follow=False)
    except regular.NotRead as err:
        if err.why == "too large":
            too_big = f"pyproject.toml is larger than {MAX_PYPROJECT_BYTES:,} bytes"
            raise UserError(too_big, location=Location(shown), hint=_TOML_HINT) from None
        if err.why not in ("link", "not regular"):
            return None
        mode = err.mode
    if stat.S_ISDIR(mode):
        return None
    raise UserError(
        f"pyproject.toml is a {kind_of(mode)}, not a regular file",
        location=Location(shown),
        hint="sweepgen reads pyproject.toml only as a plain file (never through a link): "
        "replace it with the file itself, or run from a folder without it",
    )


def _parse_toml(raw: bytes, shown: str) -> dict[str, Any]:
    """pyproject.toml's bytes as TOML; anything else is a user error at ``shown``."""
    try:
        data: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        loc = Location.at_offset(shown, raw, err.start)
        not_utf8 = f"pyproject.toml is not UTF-8 text (byte {err.start})"
        raise UserError(not_utf8, location=loc, hint=_TOML_HINT) from None
    except RecursionError:
        too_deep = "pyproject.toml is nested too deeply"
        raise UserError(too_deep, location=Location(shown), hint=_TOML_HINT) from None
    except ValueError as err:  # TOMLDecodeError, and an integer longer than Python converts
        message, line, col = error_place(str(err), raw.decode("utf-8"))
        invalid = f"pyproject.toml is not valid TOML: {message}"
        raise UserError(invalid, location=Location(shown, line, col), hint=_TOML_HINT) from None
    return data


def where(shown: str, *keys: str) -> Location:
    """Where ``[tool.sweepgen]``'s ``keys`` (``"limits", "variants"``) are written in the
    pyproject.toml at ``shown`` (``tomllines.key_place``)."""
    try:
        raw = _read(shown, shown)
    except UserError:
        raw = None
    if raw is None:
        return Location(shown)
    text = raw.decode("utf-8", "replace")
    return Location(shown, *key_place(text, ("tool", "sweepgen", *keys)))


class _Budget:
    """Entries and seconds left to the specs walk; spent: an exit-2 error naming the key."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.entries = MAX_WALK_ENTRIES
        self.deadline = time.monotonic() + MAX_WALK_SECONDS

    def spend(self, n: int) -> None:
        self.entries -= n
        if self.entries < 0 or time.monotonic() > self.deadline:
            raise ConfigError(
                f"the specs globs reach more than {MAX_WALK_ENTRIES:,} files and folders "
                f"(or {MAX_WALK_SECONDS:.0f} s of walking)",
                location=where(_shown(self.source), "specs"),
                key="tool.sweepgen.specs",
                hint='narrow the globs to the folders that hold specs, e.g. specs = ["specs/*.yaml"]',
            )


def _magic(part: str) -> bool:
    return any(ch in part for ch in "*?[")


def _matches(parts: list[str], names: list[str]) -> bool:
    """Glob segments (``**``: any number of folders) against path segments, as a set of positions."""

    def closure(states: set[int]) -> set[int]:
        out = set(states)
        for i in sorted(states):
            j = i
            while j < len(parts) and parts[j] == "**":
                j += 1
                out.add(j)
        return out

    states = closure({0})
    for name in names:
        states = closure(_step(parts, states, name))
        if not states:
            return False
    return len(parts) in states


def _step(parts: list[str], states: set[int], name: str) -> set[int]:
    """The glob positions reached from ``states`` by the path segment ``name`` (a dot-file is
    matched only by a segment that starts with a dot, never by ``**`` or a wildcard)."""
    nxt = set()
    for i in states:
        if i >= len(parts):
            continue
        part = parts[i]
        if part == "**":
            if not name.startswith("."):
                nxt.add(i)
        elif fnmatch.fnmatchcase(name, part) and (part.startswith(".") or not name.startswith(".")):
            nxt.add(i + 1)
    return nxt


def _walk(start: str, parts: list[str], out_abs: str, budget: _Budget) -> set[str]:
    """Files under ``start`` whose relative path matches ``parts``; links never followed, hidden
    folders and the output root skipped, the walk's depth bounded when the pattern has no ``**``."""
    if not os.path.isdir(start) or os.path.islink(start):
        return set()
    found = set()
    base = os.path.abspath(start)
    for folder, dirs, files in walk(base):  # any depth: no recursion
        budget.spend(len(dirs) + len(files) + 1)
        rel = os.path.relpath(folder, base)
        prefix = [] if rel == "." else rel.split(os.sep)
        # without `**`, the walk goes no deeper than the pattern's segments
        deeper = "**" in parts or len(prefix) + 1 < len(parts)
        dirs[:] = _subfolders(folder, dirs, out_abs) if deeper else []
        found.update(_matching(folder, files, parts, prefix))
    return found


def _subfolders(folder: str, dirs: list[str], out_abs: str) -> list[str]:
    """The folders of ``folder`` the specs walk enters: not hidden, not the output root."""
    return [d for d in dirs if not d.startswith(".") and not within(os.path.join(folder, d), out_abs)]


def _matching(folder: str, files: list[str], parts: list[str], prefix: list[str]) -> list[str]:
    """The files of ``folder``, at ``prefix`` below the walk's start, that the glob segments
    ``parts`` match; a match that is a link or not a regular file is refused (``_not_a_spec``):
    skipped in silence, `check` would pass without checking what the person takes for a spec."""
    out = []
    for name in files:
        full = os.path.join(folder, name)
        if _matches(parts, [*prefix, name]):
            _not_a_spec(full)
            out.append(full)
    return out


def _not_a_spec(path: str) -> None:
    """Refuses ``path``, a match of the specs globs, where it is a link (never followed: it can lead
    outside the project) or not a regular file (a FIFO would hang the read)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return  # removed since the folder was listed: found missing where it is read
    if stat.S_ISREG(mode):
        return
    what = "a symbolic link" if stat.S_ISLNK(mode) else f"not a regular file ({kind_of(mode)})"
    raise UserError(
        f"{_shown(path)} matches the specs globs but is {what}: sweepgen never reads a spec through "
        "a link (one can lead outside the project) and reads only regular files",
        location=Location(_shown(path)),
        hint="put the spec file itself there (copy it in place of the link), or move what is there "
        "out of the specs globs' reach ([tool.sweepgen] specs in pyproject.toml sets them)",
    )


def _shown(path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path))
    return (path if rel.startswith("..") else rel).replace(os.sep, "/")
