"""A ``dataset_name`` that names a local folder which is not there: refused before any run starts
here or on Slurm (whose jobs start in the same working folder, which a Slurm sweep shares with the
nodes); where only the Hugging Face cache could say (offline, a Hub id), a Slurm run's is its
node's, not known here: a warning says the check was not made.

TRL's scripts hand ``dataset_name`` to ``datasets.load_dataset``, which loads a folder of that name
if there is one, and otherwise takes the name for a Hub dataset id (``org/name``). A mistyped local
folder (``data/prefs`` for ``data/prefers``) then fails at each run's start, after trl's import, or,
worse, loads a Hub dataset that happens to bear the name. A name is judged only where it cannot be
a Hub id, or plainly means a folder of the working folder (where the runs start): it starts with
``/``, ``./``, ``../`` or ``~`` (which is not expanded), or holds two ``/`` or a ``\\`` (a Hub id holds
at most one ``/``); or its first part is a folder here and the Hub is off (``HF_HUB_OFFLINE`` or
``HF_DATASETS_OFFLINE``, here or in the config's ``env:``) or that folder holds a name close to its
last part (a typo: ``org/name`` with a folder ``org`` here is still a Hub id otherwise), and
`datasets` has no copy of the Hub dataset in its cache (hf_cache: offline, it loads that). A config
with ``datasets`` (TRL's mixture, which wins over ``dataset_name``) has each entry's ``path`` judged
so instead (TRL hands it to ``load_dataset`` the same way). Never judged: a name that
leads out of the working folder (``~``, ``..``, an absolute path elsewhere, a link leading out): the
config is data a pull request may have written, and nothing outside is looked at for it (SECURITY.md).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.fs import confine
from sweepgen.run.core.base import RunTask
from sweepgen.run.start.config_where import key_location, value_location
from sweepgen.run.start.trl import hf_cache

Warn = Callable[[Location, str], None]  # a warning at a place: a check not made, and why


@dataclass(frozen=True)
class Where:
    """Where the runs start: ``cli``, run by ``trl X`` (whose ``env:`` reaches huggingface_hub:
    hf_cache.run_environ); ``cache_here``, on this machine, whose Hugging Face caches are the runs'
    (a Slurm node's may be its own disk: a judgment that needs one is said not made, to ``warn``)."""

    cli: bool = False
    cache_here: bool = True
    warn: Warn | None = None

    def not_judged(self, location: Location, text: str) -> None:
        if self.warn is not None:
            self.warn(location, text)


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    *,
    from_command: bool = False,
    where: Where = Where(),
) -> None:
    """Exit 2 when the run's ``dataset_name`` (``from_command``: given on the command line, over the
    config's), or the ``path`` of an entry of its ``datasets`` mixture (which wins over it), means
    a folder of the working folder that is not there."""
    mixture = config.get("datasets")
    offline = hf_cache.datasets_offline(*hf_cache.run_environ(config, cli=where.cli))
    run = _Run(sweep_dir, task, config, offline, where)
    if not mixture:
        _judge_name(run, config.get("dataset_name"), ("dataset_name",), from_command)
        return
    for i, entry in enumerate(mixture if isinstance(mixture, list) else []):
        path = entry.get("path") if isinstance(entry, dict) else None
        _judge_name(run, path, ("datasets", i, "path"), False)


@dataclass(frozen=True)
class _Run:
    sweep_dir: Path
    task: RunTask
    config: Mapping[str, Any]
    offline: bool
    where: Where


def _judge_name(run: _Run, name: object, where: tuple[str | int, ...], from_command: bool) -> None:
    """Exit 2 when ``name`` (the config's value at ``where``) means a missing folder here."""
    if not _judged(name):
        return
    assert isinstance(name, str)
    close = _close(name)
    label = where[0] if len(where) == 1 else f"datasets[{where[1]}].path"
    location = value_location(run.sweep_dir, run.task, where, from_command)
    if not is_path(name) and _may_be_hub(run, name, close, (location, str(label))):
        return
    refusal = ConfigError(
        f"{label} {name!r} is no folder of {os.getcwd()}, where the runs start: `datasets."
        "load_dataset` takes a name that is no folder for a Hub dataset id, so each run would fail "
        "at its start (or load another dataset)",
        location=location,
        key=str(where[0]),
        hint=(f"did you mean {close!r}? " if close else "")
        + "name the folder as a path from the folder you run `sweepgen run` in (`~` is not expanded), "
        "or a Hub dataset as org/name",
    )
    # read: the name, the mixture that would win over it, and (a name that may be a Hub id) env:
    refusal.reads = frozenset({"dataset_name", "datasets", *(() if is_path(name) else ("env",))})
    raise refusal


def _may_be_hub(run: _Run, name: str, close: str | None, shown: tuple[Location, str]) -> bool:
    """Whether ``org/name``, with a folder ``org`` here, may still be the Hub dataset it spells:
    without a name close to it in that folder (a typo) while the Hub is on for the run's `datasets`,
    or in `datasets`' cache, which offline it loads (hf_cache); a Slurm run's cache is its node's,
    not known here: said not judged (True)."""
    if not _under_folder(name) or not (close is not None or run.offline):
        return True
    if hf_cache.has_dataset(name, run.config):
        return True  # offline, `datasets` loads the cached copy
    if not run.where.cache_here:
        run.where.not_judged(shown[0], _cache_not_judged(shown[1], name))
        return True
    return False


def _cache_not_judged(label: str, name: str) -> str:
    return (
        f"{label} {name!r} is no folder here and, as a Hub dataset, is not in this machine's `datasets` "
        f"cache ({hf_cache.datasets_cache()}); the Slurm nodes' cache was not checked (it may be their "
        "own disk): unless theirs holds it, each run fails at its start"
    )


def judge_model(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    *,
    from_command: bool = False,
    where: Where = Where(),
    key: str = "model_name_or_path",
) -> None:
    """Exit 2 when the run's ``model_name_or_path`` (or ``key``: GRPO's and RLOO's
    ``reward_model_name_or_path``, loaded by from_pretrained too) can only be a path (``./models/qwen``,
    two ``/``: never a Hub id) of the working folder and is not there: transformers' ``from_pretrained``
    then refuses it as a Hub id at each run's start ("Repo id must be in the form ..."); or, the
    policy model, is a Hub id the run's huggingface_hub, offline, has not in its cache (``_judge_cached``)."""
    name = config.get(key)
    if not _judged(name):
        return
    if not is_path(str(name)):
        if key == "model_name_or_path":  # its revision is model_revision's; a reward model's is not
            _judge_cached(_Run(sweep_dir, task, config, False, where), str(name), from_command)
        return
    close = _close(str(name))
    raise ConfigError(
        f"{key} {name!r} is no folder of {os.getcwd()}, where the runs start: transformers "
        "takes a name that is no folder for a Hub model id, which this one cannot be, so each run would "
        "fail at its start",
        location=Location("--command") if from_command else key_location(sweep_dir, task, key),
        key=key,
        hint=(f"did you mean {close!r}? " if close else "")
        + "name the model's folder as a path from the folder you run `sweepgen run` in (`~` is not "
        "expanded), or a Hub model as org/name",
    )


def _judge_cached(run: _Run, name: str, from_command: bool) -> None:
    """Exit 2 when the Hub model ``name`` (at the config's ``model_revision``, TRL's default
    ``main``) is not in huggingface_hub's cache and the run's huggingface_hub is offline
    (``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``; ``env:`` only under ``trl X``: hf_cache): transformers
    then fails at each run's start ("couldn't connect to 'https://huggingface.co' ... couldn't find
    them in the cached files"). Nothing goes to the network: only the cache is read. Runs started
    elsewhere (Slurm): a warning that the nodes' cache was not checked, where this one lacks it."""
    config = run.config
    hub, _ = hf_cache.run_environ(config, cli=run.where.cli)
    revision = config.get("model_revision", "main")
    if not hf_cache.hub_offline(hub) or not isinstance(revision, str):
        return
    if hf_cache.has_model(name, revision, config) is not False:
        return
    location = value_location(run.sweep_dir, run.task, "model_name_or_path", from_command)
    if not run.where.cache_here:
        run.where.not_judged(location, _model_not_judged(name, revision))
        return
    at = "" if revision == "main" else f" at revision {revision!r}"
    refusal = ConfigError(
        f"model_name_or_path {name!r} is a Hub model id, the Hub is off for the runs (HF_HUB_OFFLINE or "
        f"TRANSFORMERS_OFFLINE), and huggingface_hub's cache ({hf_cache.hub_cache()}) has no copy of it{at}: "
        "transformers' from_pretrained would fail at each run's start",
        location=location,
        key="model_name_or_path",
        hint=f"download it once while online (`hf download {name}`), or unset HF_HUB_OFFLINE for the runs, "
        "or name a local folder holding the model",
    )
    refusal.reads = frozenset({"model_name_or_path", "model_revision", "env"})
    raise refusal


def _model_not_judged(name: str, revision: str) -> str:
    at = "" if revision == "main" else f" at revision {revision!r}"
    return (
        f"model_name_or_path {name!r} is a Hub model id, the Hub is off for the runs, and this machine's "
        f"huggingface_hub cache ({hf_cache.hub_cache()}) has no copy of it{at}; the Slurm nodes' cache was "
        "not checked (it may be their own disk): unless theirs holds it, each run fails at its start"
    )


def _judged(name: object) -> bool:
    """Whether the name is one to judge: a string, spelled inside the working folder and not there."""
    return isinstance(name, str) and inside_here(name) and not os.path.exists(name)


def inside_here(name: str) -> bool:
    """Whether the name, read as a path from the working folder, stays in it, links resolved, the
    named folder's or file's own too (a `data -> ~/private` was looked in: its README.md read, its
    configs named); its spelling checked first, so a name spelled outside is never looked up."""
    if not name or "\0" in name or name.startswith("~"):
        return False
    here = os.getcwd()
    spelled = os.path.normpath(os.path.join(here, name))
    return confine.within(spelled, here) and confine.within(os.path.realpath(spelled), here)


def is_path(name: str) -> bool:
    """Whether the name can only be a path: never a Hub id."""
    return name.startswith(("/", "./", "../", "~")) or name.count("/") >= 2 or "\\" in name


def _under_folder(name: str) -> bool:
    first, slash, _ = name.partition("/")
    return bool(slash) and os.path.isdir(first)


def _close(name: str) -> str | None:
    """The entry of the name's folder closest to its last part, as the config would write it."""
    parent, _, last = name.rstrip("/").rpartition("/")
    try:
        found = difflib.get_close_matches(last, os.listdir(parent or "."), n=1)
    except OSError:
        return None
    return None if not found else f"{parent}/{found[0]}" if parent else found[0]
