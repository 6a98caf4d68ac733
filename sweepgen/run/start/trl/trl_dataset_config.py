"""A ``dataset_config`` (or a mixture entry's ``name``) that a local dataset folder does not have:
refused before any run starts here or on Slurm.

TRL's scripts hand ``dataset_config`` to ``datasets.load_dataset(dataset_name, name=...)`` (TRL 1.16;
a mixture's entries their ``name`` with their ``path``). For a folder of data files, ``datasets``
knows the configs its ``README.md`` front matter lists (``configs:``, each ``config_name``, else
``default``), or the one ``default`` where it lists none, and raises at each run's start for any
other ("BuilderConfig 'X' not found. Available: [...]"), or, given none where the folder lists
several and marks none ``default: true``, "Config name is missing". Checked against datasets itself
(tests). A folder's card that does not read (bad YAML) is not judged: ``datasets`` says so itself.
Only folders inside the working folder are looked at (trl_dataset.inside_here).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from sweepgen.compile.run_api import read_regular
from sweepgen.errors import ConfigError, Location, SpecError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start.config_where import key_location
from sweepgen.run.start.trl.trl_dataset import inside_here

# huggingface_hub.repocard.REGEX_YAML_BLOCK: the card's front matter
_FRONT = re.compile(r"^(\s*---[\r\n]+)([\S\s]*?)([\r\n]+---(\r\n|\n|$))")


def judge(sweep_dir: Path, task: RunTask, config: Mapping[str, Any], *, from_command: bool = False) -> None:
    """Exit 2 when the run's local dataset folder (``dataset_name``, or each mixture entry's
    ``path``) has no config of the name it is loaded with (``from_command``: the command line's
    ``--dataset_config``)."""
    mixture = config.get("datasets")
    if not mixture:
        where = Location("--command") if from_command else None
        _judge(
            sweep_dir,
            task,
            config.get("dataset_name"),
            config.get("dataset_config"),
            ("dataset_config",),
            where,
        )
        return
    for i, entry in enumerate(mixture if isinstance(mixture, list) else []):
        if isinstance(entry, dict):
            _judge(sweep_dir, task, entry.get("path"), entry.get("name"), ("datasets", i, "name"), None)


def _judge(
    sweep_dir: Path,
    task: RunTask,
    folder: object,
    name: object,
    key: tuple[str | int, ...],
    where: Location | None,
) -> None:
    configs = _configs_of(folder, name)
    problem = None if configs is None else _problem(name if isinstance(name, str) else None, *configs)
    if configs is None or problem is None:
        return
    label = key[0] if len(key) == 1 else f"datasets[{key[1]}].name"
    shown = key if name is not None or len(key) == 1 else key[:2]
    refusal = ConfigError(
        f"{label} is {'not set' if name is None else repr(name)}, but the dataset folder {folder!r} "
        f"{problem}: `datasets.load_dataset` raises at each run's start",
        location=where or key_location(sweep_dir, task, shown),
        key=str(key[0]),
        hint=f"set {label} to one of {', '.join(configs[0])} (the configs its README.md lists, else "
        "`default`), or list it under `configs:` in the folder's README.md",
    )
    refusal.reads = frozenset({"dataset_name", "dataset_config", "datasets"})
    raise refusal


def _configs_of(folder: object, name: object) -> tuple[list[str], str | None] | None:
    """The configs of a local folder of the working folder loaded by ``name`` (folder_configs);
    None: not one to judge."""
    judged = isinstance(folder, str) and inside_here(folder) and os.path.isdir(folder)
    if not judged or (name is not None and not isinstance(name, str)):
        return None
    return folder_configs(str(folder))


def _problem(name: str | None, names: list[str], default: str | None) -> str | None:
    if name is None:
        several = default is None and len(names) > 1
        return "lists several configs and marks none default" if several else None
    return None if name in names else f"has no config of that name (its configs: {', '.join(names)})"


def folder_configs(folder: str) -> tuple[list[str], str | None] | None:
    """The config names ``datasets`` knows for a folder of data files and the one it loads without
    a name (None: none marked); None: its card does not read."""
    card = _card(folder)
    if card is None:
        return None
    listed = card.get("configs")
    if not isinstance(listed, list) or not listed:
        return ["default"], "default"
    return _names(c for c in listed if isinstance(c, dict))


def _names(entries: Iterable[dict[str, Any]]) -> tuple[list[str], str | None]:
    """The ``configs:`` entries' names (``config_name``, else ``default``), and the one loaded without
    a name: the one marked ``default: true``, else one named ``default``."""
    named = [(str(c.get("config_name", "default")), c.get("default") is True) for c in entries]
    names = [name for name, _ in named]
    marked = [name for name, default in named if default]
    return names, marked[0] if marked else ("default" if "default" in names else None)


def _card(folder: str) -> dict[str, Any] | None:
    """The front matter of the folder's README.md (empty: none); None where it does not read (a
    FIFO or device there is not waited on, a file past the input limit not read: project.read_regular)."""
    path = os.path.join(folder, "README.md")
    if not os.path.lexists(path):
        return {}
    try:
        text = read_regular(path, what="dataset card", loc=Location(path)).decode("utf-8")
    except (SpecError, UnicodeDecodeError):
        return None
    found = _FRONT.search(text)
    try:
        card = yaml.safe_load(found.group(2)) if found else {}
    except yaml.YAMLError:
        return None
    return card if isinstance(card, dict) else {}
