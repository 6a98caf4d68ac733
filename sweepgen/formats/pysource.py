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

from sweepgen.fs import regular


@functools.lru_cache(maxsize=128)
def parsed(module: str) -> ast.Module | None:
    """The AST of the dotted ``module``'s source (``pkg/sub/mod.py``, else its package's
    ``__init__.py``); None where it is not installed here, is not Python source, or does not read
    or parse. Parsed once per process: several checks and schemas read one trainer's file."""
    for path in _source_paths(module):
        try:
            return ast.parse(_read(path))
        except (
            regular.NotRead,
            SyntaxError,
            ValueError,
            RecursionError,
            MemoryError,
        ):  # the last two: the parser's
            continue
    return None


MAX_SOURCE_BYTES = 16 << 20  # a module's source; TRL's largest is ~100 KB


def _read(path: str) -> bytes:
    """The bytes of the regular file ``path``, never waited on (a FIFO, a device) nor read past
    MAX_SOURCE_BYTES (a file that grows past it while read is refused, not cut short):
    ``regular.NotRead`` otherwise. A folder on sys.path may be the working folder (`python -m`)."""
    return regular.read(path, limit=MAX_SOURCE_BYTES)


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
