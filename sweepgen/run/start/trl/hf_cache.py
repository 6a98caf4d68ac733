"""Whether `datasets` has a Hub dataset ``org/name`` in its own cache, where ``load_dataset``
loads it from when the Hub is off: datasets' ``CachedDatasetModuleFactory`` and the cache builder's
``_find_hash_in_cache`` (datasets 5.2, ``datasets/load.py``, ``packaged_modules/cache/cache.py``),
read as they read it, without importing datasets (the core has none).

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
    return any(_own_config(Path(folder)) for folder in found)


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


def _own_config(folder: Path) -> bool:
    """A cached dataset's folder whose ``dataset_info.json`` names the config its path does."""
    try:
        info = json.loads((folder / "dataset_info.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return folder.is_dir() and isinstance(info, dict) and info.get("config_name") == folder.parts[-3]
