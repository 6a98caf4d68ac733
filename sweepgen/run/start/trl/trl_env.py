"""A TRL config whose `env:` block sets the GPUs a run sees: refused where `sweepgen run` gives each
run its GPUs.

TRL's parser (``TrlParser.parse_args_and_config``) sets every entry of a config file's ``env:``
mapping in the training process's environment before anything touches CUDA. ``env:
{CUDA_VISIBLE_DEVICES: "0"}`` so overrides the GPU(s) `run` hands each run (``--gpus``,
``--per-gpu``, a Slurm job's): every run trains on the config's GPU, crowding it or running out of
memory, while the schedule says the runs are spread (a wrong sweep that looks right).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start.config_where import key_location

# what selects the devices a CUDA process sees (ROCm's twins for AMD GPUs)
DEVICE_KEYS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def judge(sweep_dir: Path, task: RunTask, config: Mapping[str, Any], gpus_each: int) -> None:
    """Exit 2 when the run's rendered ``config`` sets one of DEVICE_KEYS in its ``env:`` block while
    the run is given ``gpus_each`` GPUs."""
    env = config.get("env")
    if not isinstance(env, Mapping):
        return
    key = next((k for k in DEVICE_KEYS if k in env), None)
    if key is not None:
        raise ConfigError(
            f"the config of run {task.name!r} sets env.{key} to {str(env[key])!r}, which TRL applies "
            f"inside the run over the {gpus_each} GPU(s) `sweepgen run` gives each run: every run "
            "would train on the config's GPUs, not the ones it was given",
            location=key_location(sweep_dir, task, ("env", key)),
            key=f"env.{key}",
            hint=f"remove {key} from the config's env: block; choose the GPUs with "
            "`sweepgen run --gpus` (resources.gpus_per_run on Slurm)",
        )
