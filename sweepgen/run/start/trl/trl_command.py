"""``--command "trl online_dpo --config {config}"``: a command the installed TRL CLI does not have,
refused before any run starts.

``trl``'s argparse refuses an unknown command ("invalid choice"), but only inside each run, once
the run has started (and is then a failed run needing ``--rerun-failed``). TRL's experimental
trainers (online DPO, ORPO, CPO, GKD, ...) have no CLI command. The commands are read from the
installed CLI's source (``trl/cli/commands``: each ``TrainingCommand("dpo")`` and each command
class's ``name="..."``), never imported, and only where the command's ``trl`` is the one installed
here (installed_source.same_environment): another environment may hold another release.
"""

from __future__ import annotations

import ast
import difflib
import os
from collections.abc import Sequence

from sweepgen.errors import UserError
from sweepgen.formats import pysource
from sweepgen.run.start import installed_source

_PACKAGE = "trl.cli.commands"


def check(command: Sequence[str]) -> None:
    """Exit 2 when ``command`` runs the installed ``trl`` with a command it does not have."""
    if len(command) < 2 or os.path.basename(command[0]) != "trl" or command[1].startswith("-"):
        return
    known = commands() if installed_source.same_environment(command) else frozenset()
    if not known or command[1] in known:
        return
    close = difflib.get_close_matches(command[1].replace("-", "_"), sorted(known), n=1)
    raise UserError(
        f"--command runs `trl {command[1]}`, but the installed trl has no such command (its commands: "
        f"{', '.join(sorted(known))}): every run would fail at its start",
        hint=(f"did you mean `trl {close[0]}`? " if close else "")
        + "TRL's experimental trainers (online DPO, ORPO, CPO, ...) have no CLI command: run a script "
        "of your own that builds the trainer, e.g. --command 'python train.py --config {config}'",
    )


def runs_cli(command: Sequence[str]) -> bool:
    """Whether ``command`` is the ``trl`` CLI's (``trl grpo ...``): it parses the config, and applies
    its ``env:``, in its own process before launching TRL's script."""
    return len(command) >= 2 and os.path.basename(command[0]) == "trl"


def commands() -> frozenset[str]:
    """The installed TRL CLI's commands, read from its source; empty when it is not there."""
    registry = pysource.parsed(_PACKAGE)
    if registry is None:
        return frozenset()
    names = set(_training(registry))
    for node in registry.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            names |= _named(pysource.parsed(f"{_PACKAGE}.{node.module}"))
    return frozenset(names)


def _training(tree: ast.Module) -> list[str]:
    """Each ``TrainingCommand("NAME")``'s NAME."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n) == "TrainingCommand"]
    return [name for name in map(_first_string, calls) if name is not None]


def _called(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else None


def _first_string(call: ast.Call) -> str | None:
    return _string(call.args[0]) if call.args else None


def _named(tree: ast.Module | None) -> set[str]:
    """Each ``name="..."`` a command module's code passes (``super().__init__(name="env", ...)``)."""
    keywords = [k for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords] if tree else []
    named = (_string(k.value) for k in keywords if k.arg == "name")
    return {name for name in named if name is not None}


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
