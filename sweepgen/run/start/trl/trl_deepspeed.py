"""``accelerate_config: zero2`` (TRL's DeepSpeed presets, or a config file of the project whose
``distributed_type`` is DEEPSPEED) for a ``trl X`` run whose environment has no DeepSpeed: refused
before any run starts.

TRL's CLI hands ``accelerate_config`` to ``accelerate launch`` (trl/cli), whose launcher raises
"DeepSpeed is not installed => run `pip3 install deepspeed`" for a DeepSpeed config
(accelerate/commands/launch.py, deepspeed_launcher), unless that config says ``use_cpu``: each run
fails at its start. The config is read as trl_processes reads it (a project file first, else TRL's
preset from the installed package), the package looked up without importing it, and only where the
command's ``trl`` is installed beside sweepgen (installed_source.same_environment).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import installed_source
from sweepgen.run.start.config_where import value_location
from sweepgen.run.start.trl import trl_processes

_KEY = "accelerate_config"


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    command: Sequence[str],
    flags: Mapping[str, str | None],
) -> None:
    """Exit 2 when the ``trl X`` run's ``accelerate_config`` (the command line's over the config's)
    names a DeepSpeed config and this environment, the run's, has no ``deepspeed``."""
    from_command = _KEY in flags
    name = flags[_KEY] if from_command else config.get(_KEY)
    if not (isinstance(name, str) and _cli(command) and _deepspeed(name)) or _installed():
        return
    if not installed_source.same_environment(command):
        return
    refusal = ConfigError(
        f"accelerate_config {name!r} is a DeepSpeed config, but deepspeed is not installed in the runs' "
        'environment: `accelerate launch` raises "DeepSpeed is not installed" at each run\'s start',
        location=value_location(sweep_dir, task, _KEY, from_command),
        key=_KEY,
        hint="install it (`pip install deepspeed`), or name another accelerate_config (multi_gpu, fsdp2)",
    )
    refusal.reads = frozenset({_KEY})
    raise refusal


def _cli(command: Sequence[str]) -> bool:
    """TRL's CLI, which hands accelerate_config to accelerate (TRL's script run otherwise ignores it)."""
    return bool(command) and os.path.basename(command[0]) == "trl"


def _deepspeed(name: str) -> bool:
    """Whether the accelerate config ``name`` launches DeepSpeed (and not on the CPU)."""
    held = trl_processes.launch_config(name)
    kind = held.get("distributed_type") if isinstance(held, dict) else None
    return isinstance(kind, str) and kind.upper() == "DEEPSPEED" and held.get("use_cpu") is not True


def _installed() -> bool:
    return importlib.util.find_spec("deepspeed") is not None
