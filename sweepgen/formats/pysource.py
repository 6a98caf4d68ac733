"""The parsed source of an installed module, found without importing it or its package: a TRL
script's registry, a config class's defaults (run's start checks), the string options a trainer's
code closes (schema export). ``importlib.util.find_spec("trl.trainer.grpo_config")`` would import
``trl`` and ``trl.trainer`` first, a minute on a loaded machine; only the top-level package is looked
up here, which imports nothing."""

from __future__ import annotations

import ast
import functools
import importlib.util
import os


@functools.lru_cache(maxsize=128)
def parsed(module: str) -> ast.Module | None:
    """The AST of the dotted ``module``'s source (``pkg/sub/mod.py``, else its package's
    ``__init__.py``); None where it is not installed here, is not Python source, or does not read
    or parse. Parsed once per process: several checks and schemas read one trainer's file."""
    for path in _source_paths(module):
        try:
            with open(path, "rb") as fh:
                return ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            continue
    return None


def _source_paths(module: str) -> list[str]:
    top, _, rest = module.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if not rest:
        return [spec.origin] if spec.origin and spec.origin.endswith(".py") else []
    parts = rest.split(".")
    return [
        path
        for folder in spec.submodule_search_locations or []
        for path in (os.path.join(folder, *parts) + ".py", os.path.join(folder, *parts, "__init__.py"))
    ]
