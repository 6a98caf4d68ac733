"""Whether `datasets` has a Hub dataset ``org/name`` in its own cache, where ``load_dataset``
loads it from when the Hub is off: datasets' ``CachedDatasetModuleFactory`` and the cache builder's
``_find_hash_in_cache`` (datasets 5.2, ``datasets/load.py``, ``packaged_modules/cache/cache.py``),
read as they read it, without importing datasets (the core has none). Whether transformers has a
Hub model's ``config.json`` in huggingface_hub's cache, where ``from_pretrained`` reads it offline:
huggingface_hub's own ``try_to_load_from_cache`` (imported only then; it reads files, never the
network).

Whether a run is offline, as the run's own libraries decide it (checked against TRL 1.16 scripts):
huggingface_hub reads ``HF_HUB_OFFLINE`` (else ``TRANSFORMERS_OFFLINE``) once, when imported, which
a TRL script does before its ``TrlParser`` applies the config's ``env:`` block; ``datasets`` is
imported after it (in the script's ``main``) and reads ``HF_DATASETS_OFFLINE``, else huggingface_hub's
answer. ``trl X`` parses the config in the CLI's process, whose environment the launched script
inherits: there ``env:`` counts for both.

The cache is ``HF_DATASETS_CACHE``, else ``$HF_HOME/datasets``, else
``$XDG_CACHE_HOME/huggingface/datasets`` (``~/.cache``): ``<org>___<name in snake case>/<config>/
<version>/<hash>/``, a folder whose ``dataset_info.json`` names its own config. Only this
process's environment picks the cache: a config whose ``env:`` names another cache is taken to
have the dataset there (that folder is the config's to name, and is never looked at for it).
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepgen.compile.run_api import read_regular
from sweepgen.errors import Location, SpecError

# a Hub id as `datasets` takes it for one: one `/`, no path part of its own
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_CACHE_KEYS = ("HF_DATASETS_CACHE", "HF_HOME", "XDG_CACHE_HOME")
# datasets.naming.camelcase_to_snakecase
_UPPER_UPPER = re.compile(r"([A-Z]+)([A-Z][a-z])")
_LOWER_UPPER = re.compile(r"([a-z\d])([A-Z])")


def has_dataset(name: str, config: Mapping[str, Any]) -> bool:
    """Whether ``load_dataset(name, dataset_config)`` offline would find the Hub dataset ``name`` in
    the cache (True too when the config's ``env:`` names another cache)."""
    block = config.get("env")
    if isinstance(block, dict) and any(k in block for k in _CACHE_KEYS):
        return True
    if not _HUB_ID.fullmatch(name) or ".." in name:
        return False
    org, _, last = name.partition("/")
    wanted = config.get("dataset_config")
    root = os.path.join(datasets_cache(), f"{org}___{snake_case(last)}")
    found = glob.glob(
        os.path.join(glob.escape(root), glob.escape(wanted) if isinstance(wanted, str) else "*", "*", "*")
    )
    # a folder whose dataset_info.json does not read (a FIFO, a device, past the input limit: a
    # shared cache's) is not judged: datasets says for itself what it finds there
    return any(_own_config(Path(folder)) is not False for folder in found)


_TRUE = ("1", "ON", "YES", "TRUE")  # huggingface_hub.constants.ENV_VARS_TRUE_VALUES
_HUB_CACHE_KEYS = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")


def run_environ(config: Mapping[str, Any], *, cli: bool) -> tuple[dict[str, str], dict[str, str]]:
    """The environment a run's huggingface_hub and its ``datasets`` read: this process's, with the
    config's ``env:`` (as TrlParser sets it, ``str(value)``) for huggingface_hub only under ``trl X``
    (``cli``), for ``datasets`` always."""
    block = config.get("env")
    given = {str(k): str(v) for k, v in block.items()} if isinstance(block, dict) else {}
    here = dict(os.environ)
    return ({**here, **given} if cli else here), {**here, **given}


def hub_offline(environ: Mapping[str, str]) -> bool:
    """huggingface_hub.constants.HF_HUB_OFFLINE, read from ``environ``."""
    value = environ.get("HF_HUB_OFFLINE") or environ.get("TRANSFORMERS_OFFLINE")
    return value is not None and value.upper() in _TRUE


def datasets_offline(hub: Mapping[str, str], datasets: Mapping[str, str]) -> bool:
    """datasets.config.HF_HUB_OFFLINE: ``HF_DATASETS_OFFLINE`` where set, else huggingface_hub's."""
    value = datasets.get("HF_DATASETS_OFFLINE")
    return hub_offline(hub) if value is None else value.upper() in _TRUE


def has_model(name: str, revision: str, config: Mapping[str, Any]) -> bool | None:
    """Whether huggingface_hub's cache holds the Hub model ``name``'s ``config.json`` at ``revision``
    (``from_pretrained``'s first read offline); True too when the config's ``env:`` names another
    cache; None: not known here (no Hub id huggingface_hub takes). Read by huggingface_hub's own
    ``try_to_load_from_cache`` where it is installed beside sweepgen, else as it reads the cache's
    layout (cached_file): a light install, whose runs' Python has its own huggingface_hub, still
    judges (the layout is huggingface_hub's on-disk format, the same for every version that reads it)."""
    block = config.get("env")
    if isinstance(block, dict) and any(k in block for k in _HUB_CACHE_KEYS):
        return True
    return _config_cached(name, revision) if _repo_id(name) else None


def _repo_id(name: str) -> bool:
    """huggingface_hub's validate_repo_id: not one (HFValidationError), transformers says so itself."""
    bad = "--" in name or ".." in name or name.endswith(".git")
    return bool(_REPO_ID.fullmatch(name)) and not bad


def _config_cached(name: str, revision: str) -> bool | None:
    if any(part in ("", ".", "..") for part in revision.split("/")):
        return None  # a revision leading out of the cache (huggingface_hub would read there): not judged
    try:  # the ref as huggingface_hub would read it, first: never waited on, never read whole
        _commit(os.path.join(hub_cache(), "models--" + "--".join(name.split("/")), "refs", revision))
    except _Unreadable:  # huggingface_hub would wait on it, or read it whole: not judged here
        return None
    try:
        from huggingface_hub import try_to_load_from_cache  # noqa: PLC0415 - the run's own reader, only here
    except ImportError:
        return cached_file(hub_cache(), name, revision, "config.json") is not None
    try:
        found = try_to_load_from_cache(name, "config.json", cache_dir=hub_cache(), revision=revision)
    except ValueError:  # a revision it refuses: transformers says so itself
        return None
    return isinstance(found, str)


# huggingface_hub.utils._validators.REPO_ID_REGEX
_REPO_ID = re.compile(r"(\b[\w\-.]{1,96}\b/)?\b[\w\-.]{1,96}\b")


def cached_file(cache: str, name: str, revision: str, filename: str) -> str | None:
    """huggingface_hub.try_to_load_from_cache's answer for the model ``name`` (a path when cached,
    None when not; its "known not to exist" is None here too), read from the cache folder ``cache``
    without huggingface_hub: ``models--org--name/refs/<revision>`` names the commit, whose
    ``snapshots/<commit>/<filename>`` is the file. A revision leading out of the cache is not there."""
    if any(part in ("", ".", "..") for part in revision.split("/")):
        return None
    repo = os.path.join(cache, "models--" + "--".join(name.split("/")))
    try:
        commit = _commit(os.path.join(repo, "refs", revision))
    except _Unreadable:
        return None
    revision = revision if commit is None else commit
    snapshots = os.path.join(repo, "snapshots")
    try:
        shas = os.listdir(snapshots)
    except OSError:
        return None
    found = os.path.join(snapshots, revision, filename)
    return found if revision in shas and os.path.isfile(found) else None


class _Unreadable(Exception):
    """A cache file that is there but cannot be read without waiting or reading without bound."""


_MAX_CACHE_FILE = 16 << 20  # a ref is 40 bytes, a dataset_info.json kilobytes


def _commit(ref: str) -> str | None:
    """The commit a cached ref names (None: no such ref). huggingface_hub opens the file ``is_file``
    finds and reads it whole: a FIFO swapped in, a device or a huge file linked there (a shared
    cache) would hold the start checks, so it is read as project files are, never blocking, a
    regular file of a bounded size (``_Unreadable`` otherwise)."""
    if not os.path.isfile(ref):
        return None
    return _read_cache_file(ref, "cached ref").decode("utf-8", errors="replace")


def _read_cache_file(path: str, what: str) -> bytes:
    try:
        return read_regular(path, what=what, loc=Location(path), limit=_MAX_CACHE_FILE)
    except SpecError:
        raise _Unreadable(path) from None


def hub_cache() -> str:
    """huggingface_hub.constants.HF_HUB_CACHE, from this process's environment now (its spelling)."""
    env, user = os.environ, os.path.expanduser
    home = os.path.join(env.get("XDG_CACHE_HOME", os.path.join(user("~"), ".cache")), "huggingface")
    home = os.path.expandvars(user(env.get("HF_HOME", home)))
    legacy = env.get("HUGGINGFACE_HUB_CACHE", os.path.join(home, "hub"))
    return os.path.expandvars(user(env.get("HF_HUB_CACHE", legacy)))


def datasets_cache() -> str:
    """datasets.config.HF_DATASETS_CACHE, from this process's environment."""
    given = os.environ.get("HF_DATASETS_CACHE")
    if given:
        return os.path.expanduser(given)
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface"
    )
    return os.path.join(os.path.expanduser(home), "datasets")


def snake_case(name: str) -> str:
    return _LOWER_UPPER.sub(r"\1_\2", _UPPER_UPPER.sub(r"\1_\2", name)).lower()


def _own_config(folder: Path) -> bool | None:
    """A cached dataset's folder whose ``dataset_info.json`` names the config its path does; None
    when that file is there but does not read (``_read_cache_file``: not judged)."""
    path = folder / "dataset_info.json"
    if not os.path.exists(path):
        return False
    try:
        info = json.loads(_read_cache_file(str(path), "cached dataset_info.json"))
    except _Unreadable:
        return None
    except ValueError:
        return False
    return folder.is_dir() and isinstance(info, dict) and info.get("config_name") == folder.parts[-3]
