"""sweepgen: a declarative sweep compiler and validator for RL post-training."""

from __future__ import annotations

import os
import sys
from functools import cache
from typing import Any


def __getattr__(name: str) -> Any:
    # ``__version__`` is looked up on first use: importlib.metadata costs ~20 ms, a third of
    # `sweepgen --help`'s start-up, and only --version and the lock need it.
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'sweepgen' has no attribute {name!r}")


@cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # ~20 ms: only when asked for

    try:
        # The one version source is [project] version in pyproject.toml, as pip installed it.
        return version("sweepgen")
    except PackageNotFoundError:
        # Fallback for one case only: running from a source tree that was never installed
        # (PYTHONPATH=path/to/clone); it reads the same field from the tree's own pyproject.toml.
        if sys.version_info >= (3, 11):
            import tomllib
        else:
            import tomli as tomllib
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
