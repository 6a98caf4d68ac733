"""Runs of a ``trl <command>`` (or of TRL's script of that command, ``accelerate launch -m
trl.scripts.grpo``) whose configs name no ``output_dir``: refused before any run starts.

TRL's CLI parses its config into transformers' ``TrainingArguments``, whose ``output_dir`` left
unset is ``trainer_output`` in the working folder: every run of the sweep writes its checkpoints
(and trainer_state.json, and TensorBoard's logs) there, over the others', a resume starts one run
from another's, and ``report`` finds none of them in the runs' folders. ``init`` gives each run its
own; a spec written by hand, or a config that sets ``output_dir: null``, may not. A command that
passes ``--output_dir`` itself (``--output_dir {run_dir}``) is left alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.formats import yamlio

DEFAULT = "trainer_output"  # transformers' TrainingArguments.__post_init__ when output_dir is None
_FLAGS = ("--output_dir", "--output-dir")


def check(command: Sequence[str] | None, configs: Sequence[tuple[str, Path, bytes]]) -> None:
    """Exit 2 when ``command`` is ``trl <training command>`` and one of the ``configs`` (run name,
    rendered file, its bytes) leaves ``output_dir`` to transformers' default."""
    if not _applies(command):
        return
    unset = [(run, path) for run, path, data in configs if not _names_output_dir(path, data)]
    if unset:
        raise _refusal(*unset[0], others=len(unset) - 1)


def _refusal(run: str, path: Path, *, others: int) -> ConfigError:
    shared = f", and so would {others} other run(s) of this sweep, over each other's" if others else ""
    return ConfigError(
        f"run {run!r} sets no output_dir: `trl` would then write its checkpoints to transformers' "
        f"default {DEFAULT!r} in the working folder{shared}, not to the run's folder where `report` "
        "looks",
        location=Location(str(path), 1),
        hint='set it per run in the spec, e.g. derived: {+output_dir: "runs/{{ sweep.name }}/'
        '{{ variant.run_name }}"}, or pass --output_dir {run_dir} in --command',
    )


def _applies(command: Sequence[str] | None) -> bool:
    """``trl <training command>`` that does not pass ``--output_dir`` itself."""
    return command is not None and trl_training(command) and not _sets_output_dir(command)


def trl_training(command: Sequence[str]) -> bool:
    """``trl grpo ...``, or TRL's script of a training command run as a module or a file
    (``accelerate launch -m trl.scripts.grpo``, ``python -m trl.scripts.sft``, ``.../trl/scripts/dpo.py``)."""
    return trl_script(command) is not None


def trl_script(command: Sequence[str]) -> str | None:
    """The TRL training command (``grpo``) ``command`` runs, as trl_training tells it; None for any
    other command."""
    if len(command) >= 2 and os.path.basename(command[0]) == "trl":
        return command[1] if command[1] in _commands() else None
    return next((name for name in _trl_scripts(command) if name in _commands()), None)


def _trl_scripts(command: Sequence[str]) -> list[str]:
    """The names of TRL's scripts ``command`` runs: ``-m trl.scripts.NAME``, ``.../trl/scripts/NAME.py``."""
    return _trl_modules(command) + _trl_files(command)


def _trl_modules(command: Sequence[str]) -> list[str]:
    """NAME of each ``-m trl.scripts.NAME`` (python's or accelerate's module flag)."""
    modules = [command[i + 1] for i, word in enumerate(command[:-1]) if word == "-m"]
    return [m.removeprefix("trl.scripts.") for m in modules if m.startswith("trl.scripts.")]


def _trl_files(command: Sequence[str]) -> list[str]:
    """NAME of each ``.../trl/scripts/NAME.py`` (a script run from a TRL checkout)."""
    files = [PurePosixPath(word) for word in command if word.endswith(".py")]
    return [f.stem for f in files if f.parent.parts[-2:] == ("trl", "scripts")]


def _commands() -> tuple[str, ...]:
    from sweepgen.compile import run_api  # noqa: PLC0415 - the TRL CLI's commands, looked up for `trl` only

    return tuple(run_api.TRL_COMMANDS)


def _sets_output_dir(command: Sequence[str]) -> bool:
    return any(word in _FLAGS or word.startswith(tuple(f + "=" for f in _FLAGS)) for word in command)


def _names_output_dir(path: Path, data: bytes) -> bool:
    """Whether a rendered YAML config sets ``output_dir`` to a folder (anything else: not judged)."""
    config = _yaml_mapping(path, data)
    folder = config.get("output_dir") if config is not None else "not judged"
    return isinstance(folder, str) and bool(folder.strip())


def _yaml_mapping(path: Path, data: bytes) -> dict[str, Any] | None:
    """A rendered YAML config's top-level mapping; None for another kind, or one that does not read
    as a mapping (its own checks say why)."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        return None
    try:
        config = yamlio.loads(data.decode("utf-8"), str(path)).data
    except (UnicodeDecodeError, ValueError, UserError, RecursionError):
        return None
    return config if isinstance(config, dict) else None
