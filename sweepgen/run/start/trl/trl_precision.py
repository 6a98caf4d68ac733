"""``bf16`` on a machine with no accelerator: refused before any local run starts.

Every TRL config class defaults ``bf16`` to true unless ``fp16`` is set, and transformers'
TrainingArguments raises "Your setup doesn't support bf16/gpu" when no GPU supports it and
``use_cpu`` is not set: on a laptop or a CPU-only box, every run of a TRL config that does not say
``bf16: false`` fails at its start, after trl's import (a minute under load), and is then a failed run
needing ``--rerun-failed``. The machine is judged by its device nodes (no torch is imported): Linux
with none of those NVIDIA (CUDA), AMD (ROCm), WSL, Intel (XPU), Gaudi or TPU, Inferentia and Ascend
devices make. Any other system (macOS: MPS supports bf16) is not judged, nor are Slurm runs (they
run on other machines), nor a command whose program is not installed beside sweepgen (its
transformers is not known here: installed_source.same_environment).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import command_overrides
from sweepgen.run.start.config_where import key_location

_DEVICES = (
    "/dev/nvidiactl",
    "/dev/nvidia0",
    "/dev/kfd",
    "/dev/dxg",
    "/dev/dri",
    "/dev/accel",
    "/dev/vfio",
    "/dev/neuron0",
    "/dev/davinci0",
)


def no_accelerator() -> bool:
    """Whether this machine shows no device torch could train on (see the module's docstring)."""
    return sys.platform.startswith("linux") and not any(os.path.exists(p) for p in _DEVICES)


def judge(sweep_dir: Path, task: RunTask, config: Mapping[str, Any], flags: Mapping[str, str | None]) -> None:
    """Exit 2 when the run (its rendered ``config``, the command line's ``flags`` over it) trains in
    bf16 without ``use_cpu`` on this machine, which has no accelerator."""
    if _setting(config, flags, "use_cpu") is True:
        return
    bf16 = _setting(config, flags, "bf16")
    if bf16 is not True and not (bf16 is None and _setting(config, flags, "fp16") is not True):
        return
    said = "bf16 is true" if bf16 is True else "bf16 is unset, which TRL makes true when fp16 is unset,"
    raise ConfigError(
        f"{said} but this machine has no GPU: transformers refuses it at each run's start (\"Your "
        "setup doesn't support bf16/gpu\")",
        location=key_location(sweep_dir, task, "bf16")
        if "bf16" in config
        else key_location(sweep_dir, task, ()),
        key="bf16",
        hint="add `bf16: false` to the config (the spec's base) for a CPU run, or `use_cpu: true`; or "
        "run it on a machine with a GPU",
    )


def _setting(config: Mapping[str, Any], flags: Mapping[str, str | None], key: str) -> Any:
    """The key's value as the run sees it: the command line's flag over the config's (None: unset)."""
    return command_overrides.flag_bool(flags[key]) if key in flags else config.get(key)
