"""The parsed source of an installed package's file, found without importing the package (a TRL
script's registry, a config class's defaults): importing trl takes a minute on a loaded machine.
What is installed here is the run's only where the command's program lives beside sweepgen's
interpreter (same_environment): another environment may hold another release."""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import shutil
import sys
from collections.abc import Sequence


@functools.cache
def tree(package: str, rel: str) -> ast.Module | None:
    """The AST of ``rel`` (a path inside the installed ``package``); None where the package is not
    installed here or the file does not read or parse."""
    spec = importlib.util.find_spec(package)
    for folder in list(spec.submodule_search_locations or []) if spec else []:
        try:
            with open(os.path.join(folder, rel), "rb") as fh:
                return ast.parse(fh.read())
        except (OSError, SyntaxError, ValueError):
            continue
    return None


def same_environment(command: Sequence[str]) -> bool:
    """Whether the command's program is installed beside sweepgen's interpreter (one venv)."""
    program = shutil.which(command[0]) if command else None
    here = os.path.dirname(os.path.abspath(sys.executable))
    return program is not None and os.path.dirname(os.path.abspath(program)) == here
