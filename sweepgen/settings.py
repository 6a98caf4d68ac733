"""The project's one setting, ``[tool.sweepgen]`` in pyproject.toml: where specs and output live.

```toml
[tool.sweepgen]
specs = ["experiments/**/*.sweep.yaml"]   # globs, relative to pyproject.toml
output = "out"                            # the output root (default: generated)
limits = {eval_seconds = 60}              # ceilings only the person running sweepgen raises
```

``check`` and ``render`` with no spec argument, the output root of every command that has ``-o``,
orphan detection and the pre-commit hook (which runs ``sweepgen check`` with no arguments) read it,
so CI, the hook and a person at the terminal check the same specs. The nearest pyproject.toml at or
above the working directory that has the table wins. Without one, specs are what the hook matches
by default (any YAML under a ``specs/`` folder, any ``*.sweep.yaml``) and the output root is
``generated/`` in the working directory. An explicit argument (``-o``, spec paths) always wins.
"""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from sweepgen.errors import Location, UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_SPECS = ("**/specs/**/*.yaml", "**/specs/**/*.yml", "**/*.sweep.yaml", "**/*.sweep.yml")
DEFAULT_OUTPUT = "generated"
_KEYS = {"specs", "output", "limits"}


@dataclass(frozen=True)
class Settings:
    specs: tuple[str, ...]  # globs, relative to ``root``
    output: str  # relative to ``root``
    root: str  # the folder of the pyproject.toml that set them, or the working directory
    source: str | None  # that pyproject.toml as the user reads it; None: the defaults
    limits: dict[str, Any] = field(default_factory=dict)  # ceilings (sweepgen.compile.spec.limits)

    def output_root(self) -> str:
        """The output root as a path from the working directory."""
        return _shown(os.path.join(self.root, self.output))

    def spec_files(self) -> list[str]:
        """Every spec the globs match (hidden folders skipped), sorted, each once, as paths from the
        working directory; the output root is never searched."""
        out_abs = os.path.abspath(os.path.join(self.root, self.output)) + os.sep
        found = {
            os.path.abspath(p)
            for pattern in self.specs
            for p in glob.glob(os.path.join(self.root, pattern), recursive=True)
            if os.path.isfile(p)
        }
        return sorted(_shown(p) for p in found if not p.startswith(out_abs))


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
            location=Location(shown),
            hint="known keys: specs (a list of globs), output (the output root), limits (a table)",
        )
    specs = table.get("specs", list(DEFAULT_SPECS))
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, list) or not specs or not all(isinstance(s, str) and s for s in specs):
        raise UserError(
            "[tool.sweepgen] specs must be a non-empty list of glob strings",
            location=Location(shown),
            hint='e.g. specs = ["experiments/**/*.sweep.yaml"]',
        )
    output = table.get("output", DEFAULT_OUTPUT)
    if not isinstance(output, str) or not output:
        raise UserError(
            "[tool.sweepgen] output must be a folder name (a string)",
            location=Location(shown),
            hint='e.g. output = "generated"',
        )
    limits = table.get("limits", {})
    if not isinstance(limits, dict):
        raise UserError(
            "[tool.sweepgen] limits must be a table of limit = number",
            location=Location(shown),
            hint="e.g. limits = {variants = 2000000, eval_seconds = 60}",
        )
    return Settings(tuple(specs), output, os.path.dirname(path), shown, limits)


def _find(start: str) -> str | None:
    folder = start
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate) and _table(candidate) is not None:
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _table(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError:
        return None
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"pyproject.toml is not valid TOML: {err}", location=Location(_shown(path))) from None
    table = data.get("tool", {}).get("sweepgen") if isinstance(data.get("tool"), dict) else None
    if table is not None and not isinstance(table, dict):
        raise UserError("[tool.sweepgen] must be a table", location=Location(_shown(path)))
    return table


def _shown(path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path))
    return (path if rel.startswith("..") else rel).replace(os.sep, "/")
