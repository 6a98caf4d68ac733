"""A run's rendered config as its trainer reads it, and where it sets a top-level key: the line and
column a refusal names."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from sweepgen.errors import Location, UserError
from sweepgen.formats import yamlio
from sweepgen.fs.outtree import read_inside
from sweepgen.run.core.base import RunTask


def key_location(sweep_dir: Path, task: RunTask, key: str | tuple[str | int, ...]) -> Location:
    """The line of ``key`` (a top-level key, or a path of keys) in the run's rendered YAML config;
    the file itself otherwise (another kind, or a file that does not read: its own checks say why)."""
    shown = str(task.config_path)
    try:
        doc = yamlio.loads(_bytes(sweep_dir, task).decode("utf-8"), shown)
    except (ValueError, UnicodeDecodeError, UserError, RecursionError):
        return Location(shown)
    path = (key,) if isinstance(key, str) else key
    return doc.loc(path, key=True) if isinstance(doc.data, dict) else Location(shown)


def value_location(
    sweep_dir: Path, task: RunTask, key: str | tuple[str | int, ...], from_command: bool
) -> Location:
    """Where the value a refusal names was set: the run command's flag (``from_command``: given on
    the command line, over the config's), else ``key``'s line in the run's config."""
    return Location("--command") if from_command else key_location(sweep_dir, task, key)


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_READ_AS_YAML = (".yaml", ".yml", ".json")


def rendered(sweep_dir: Path, task: RunTask) -> Mapping[str, Any]:
    """The top-level mapping of the run's rendered YAML (or JSON) config, the file `trl` and other
    trainers read: a template may write keys the spec's config does not hold (`vllm_mode: server`
    written by hand), which the lock's config alone never shows. The lock's config for any other
    kind, or a file that does not read as a mapping (its own checks say why)."""
    return read_as_trl(task, _bytes(sweep_dir, task) if task.config_path.suffix in _READ_AS_YAML else b"")


def read_as_trl(task: RunTask, data: bytes) -> Mapping[str, Any]:
    """``rendered`` of a run whose config's bytes are ``data`` (a search's trial planned in memory
    by `run --dry-run`, never written)."""
    if task.config_path.suffix not in _READ_AS_YAML:
        return task.config
    try:
        doc = yaml.load(data, Loader=_LOADER)
    except (ValueError, UserError, RecursionError, yaml.YAMLError):
        return task.config
    return doc if isinstance(doc, dict) else task.config


def _bytes(sweep_dir: Path, task: RunTask) -> bytes:
    """The run's rendered config, read as `run` reads the lock's files: never through a link
    (outtree.read_inside); empty where nothing is there."""
    return read_inside(str(sweep_dir), Path(task.config_path).relative_to(sweep_dir).as_posix()) or b""
