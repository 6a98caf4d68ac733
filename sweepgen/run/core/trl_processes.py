"""`trl` runs that ask accelerate for more processes than the GPUs each run is given: refused before
any run starts.

The TRL CLI hands a config's ``num_processes`` (and ``accelerate_config``, a preset such as
``zero2`` or ``multi_gpu`` holding ``num_processes: 8``) to ``accelerate launch``. Given one GPU
(``--gpus 0,1 --per-gpu 1``, or a Slurm job of ``resources.gpus_per_node: 1``), accelerate either
starts one process, since it sees one GPU, and trains with 1/N of the batch the config says (a
wrong result that looks right), or, with a multi-GPU or DeepSpeed config, starts N processes on one
GPU, which fail. A preset whose ``distributed_type`` is ``"NO"`` starts one process whatever its
``num_processes``. A config file of the project's own (``accelerate_config: configs/acc.yaml``) and
accelerate's default config in the user's home are not read: such runs are not judged.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from sweepgen.errors import ConfigError, Location
from sweepgen.run.core.base import RunTask
from sweepgen.run.core.config_where import key_location
from sweepgen.run.core.trl_output_dir import trl_training

_PRESET = re.compile(r"[A-Za-z0-9_-]+")  # the names of trl/accelerate_configs/*.yaml
_COUNT = re.compile(r"[0-9]{1,9}")  # ASCII digits, few enough for int()


def check(
    sweep_dir: Path, command: Sequence[str] | None, tasks: Sequence[RunTask], gpus_each: int | None
) -> None:
    """Exit 2 when ``command`` runs TRL's training script and a run's config (of the sweep in
    ``sweep_dir``) asks accelerate for more processes than the ``gpus_each`` GPUs each run sees
    (None: not limited, every GPU)."""
    if gpus_each is None or command is None or not trl_training(command):
        return
    on_command_line = _command_processes(command)
    for task in tasks:
        wanted = on_command_line or processes(task.config)
        if wanted is not None and wanted[0] > max(gpus_each, 1):
            raise _refusal(sweep_dir, task, wanted, gpus_each, from_command=on_command_line is not None)


def _refusal(
    sweep_dir: Path, task: RunTask, wanted: tuple[int, str], gpus_each: int, *, from_command: bool
) -> ConfigError:
    count, said_by = wanted
    key = said_by.partition(":")[0]
    return ConfigError(
        f"run {task.name!r} asks accelerate for {count} processes ({said_by}) but each run is given "
        f"{gpus_each} GPU(s): accelerate would train one process with 1/{count} of the batch the config "
        "says, or start them all on one GPU",
        location=Location("--command") if from_command else key_location(sweep_dir, task, key),
        key=None if from_command else key,
        hint=f"give each run {count} GPUs (resources.gpus_per_run: {count} in the spec, then --gpus "
        f"takes {count} a run), or ask for {gpus_each} process(es)",
    )


def processes(config: Mapping[str, Any]) -> tuple[int, str] | None:
    """(how many processes, the key that says so) a TRL config asks accelerate for; None when it
    leaves it to accelerate's own configuration."""
    explicit = config.get("num_processes")
    if isinstance(explicit, int) and not isinstance(explicit, bool):
        return explicit, "num_processes"
    preset = config.get("accelerate_config")
    if not isinstance(preset, str):
        return None
    count = _preset_processes(preset)
    return (count, f"accelerate_config: {preset}") if count is not None else None


def _command_processes(command: Sequence[str]) -> tuple[int, str] | None:
    """``accelerate launch --num_processes 2 -m trl.scripts.grpo ...``: the command's own count."""
    for i, word in enumerate(command):
        flag, _, value = word.partition("=")
        if flag in ("--num_processes", "--num-processes"):
            value = value or (command[i + 1] if i + 1 < len(command) else "")
            if not _COUNT.fullmatch(value):  # `²` is a digit to str.isdigit, not to int()
                raise ConfigError(
                    f"{flag} {value[:40]!r} in --command is not a number of processes",
                    location=Location("--command"),
                    hint=f"give accelerate a count, e.g. {flag} 2",
                )
            return int(value), flag
    return None


def _preset_processes(name: str) -> int | None:
    """The ``num_processes`` of TRL's preset ``name`` (trl/accelerate_configs/NAME.yaml, read from the
    installed package without importing it) when it starts several; None otherwise."""
    # a preset is a plain word (`zero2`); anything else is a path, the project's own file (not read),
    # or a value no file is named by (`x\0y` from a config is data: never opened)
    spec = importlib.util.find_spec("trl") if _PRESET.fullmatch(name) else None
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = os.path.join(folder, "accelerate_configs", f"{name}.yaml")
        try:
            with open(path, encoding="utf-8") as fh:
                preset = yaml.safe_load(fh)
        except (OSError, yaml.YAMLError):
            continue
        return _several(preset)
    return None


def _several(preset: Any) -> int | None:
    if not isinstance(preset, dict) or str(preset.get("distributed_type", "")).upper() == "NO":
        return None
    count = preset.get("num_processes")
    return count if isinstance(count, int) and not isinstance(count, bool) else None
