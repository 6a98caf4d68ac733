"""sweepgen: a declarative sweep compiler and validator for RL post-training.

The public API is ``__all__``: the compile functions the CLI itself calls (``render``, ``check``,
``load_and_expand``, ``resolve_variant``, ``matrix``, ``spec_json_schema``), the values they return,
and the error classes. Everything else (the modules under ``sweepgen.compile``, ``sweepgen.readers``,
``sweepgen.run`` and ``sweepgen.cli``) is internal and may change without notice.

The names are imported on first use, so ``import sweepgen`` (and ``sweepgen --help``) stays fast.
"""

from __future__ import annotations

import os
import sys

# `python -m sweepgen` puts the working folder first on sys.path, and this package is imported before
# its __main__ runs: in a checkout under review a committed click.py, yaml.py or dataclasses.py would
# be imported in place of the library. Only `python -m` gives `-m` as argv[0] while the package loads.
# (A spec's `schema: module:Class` is imported from the working folder on purpose: it adds it itself.)
if sys.argv[:1] == ["-m"] and sys.path[:1] == [os.getcwd()]:
    del sys.path[0]

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

from sweepgen.errors import (
    ConfigError,
    Location,
    SpecError,
    SweepgenError,
    TemplateError,
    UserError,
    ValidationError,
)

if TYPE_CHECKING:  # what the lazy names below are, for type checkers
    from sweepgen.compile.api import (
        check,
        load_and_expand,
        matrix,
        render,
        resolve_variant,
        spec_json_schema,
    )
    from sweepgen.compile.check.committed import Problem, Report
    from sweepgen.compile.output.lockfile.lock import Lock, LockFile
    from sweepgen.compile.output.write.writer import Action, Outcome
    from sweepgen.compile.spec.model import Spec
    from sweepgen.compile.spec.variants.expand import Expansion, Variant

# public name -> the module that defines it, imported when the name is first used
_LAZY = {
    "render": "sweepgen.compile.api",
    "check": "sweepgen.compile.api",
    "load_and_expand": "sweepgen.compile.api",
    "resolve_variant": "sweepgen.compile.api",
    "matrix": "sweepgen.compile.api",
    "spec_json_schema": "sweepgen.compile.api",
    "Outcome": "sweepgen.compile.output.write.writer",
    "Action": "sweepgen.compile.output.write.writer",
    "Report": "sweepgen.compile.check.committed",
    "Problem": "sweepgen.compile.check.committed",
    "Expansion": "sweepgen.compile.spec.variants.expand",
    "Variant": "sweepgen.compile.spec.variants.expand",
    "Spec": "sweepgen.compile.spec.model",
    "Lock": "sweepgen.compile.output.lockfile.lock",
    "LockFile": "sweepgen.compile.output.lockfile.lock",
}

__all__ = [
    "Action",
    "ConfigError",
    "Expansion",
    "Location",
    "Lock",
    "LockFile",
    "Outcome",
    "Problem",
    "Report",
    "Spec",
    "SpecError",
    "SweepgenError",
    "TemplateError",
    "UserError",
    "ValidationError",
    "Variant",
    "__version__",
    "check",
    "load_and_expand",
    "matrix",
    "render",
    "resolve_variant",
    "spec_json_schema",
]


def __getattr__(name: str) -> Any:
    # ``__version__`` is looked up on first use: importlib.metadata costs ~20 ms, a third of
    # `sweepgen --help`'s start-up, and only --version and the lock need it.
    if name == "__version__":
        return _version()
    module = _LAZY.get(name)
    if module is not None:
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module 'sweepgen' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


@cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - ~20 ms, only when asked for

    try:
        # The one version source is [project] version in pyproject.toml, as pip installed it.
        return version("sweepgen")
    except PackageNotFoundError:
        # Fallback for one case only: running from a source tree that was never installed
        # (PYTHONPATH=path/to/clone); it reads the same field from the tree's own pyproject.toml.
        if sys.version_info >= (3, 11):
            import tomllib  # noqa: PLC0415 - only for a source tree that was never installed
        else:
            import tomli as tomllib  # noqa: PLC0415 - the same, on Python 3.10
        root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # through an editable link tree
        with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
