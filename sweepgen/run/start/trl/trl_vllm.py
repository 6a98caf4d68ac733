"""``use_vllm: true`` (or ``--use_vllm``) for a run whose environment has no vLLM: refused before
any run starts.

TRL's GRPO, RLOO and distillation trainers raise "vLLM is not available and `use_vllm` is set to
True. Please install vLLM with `pip install trl[vllm]`" when the trainer is built (TRL 1.16,
``trl/generation/vllm_generation.py``, ``trl/trainer/distillation_trainer.py``): each run fails at its
start, after the model is loaded, in both ``vllm_mode``s (a server run's client checks too). vLLM is
looked up as TRL looks it up (an installed ``vllm`` distribution, never imported), and only where
the command's program is installed beside sweepgen (installed_source.same_environment): another
environment may hold vLLM. vLLM needs a GPU: on a machine without one the hint says to drop it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError
from sweepgen.run.core.base import RunTask
from sweepgen.run.start import command_overrides, installed_source
from sweepgen.run.start.config_where import value_location

# the TRL scripts whose config class has `use_vllm` (TRL 1.16: GRPOConfig, RLOOConfig, DistillationConfig)
SCRIPTS = frozenset({"grpo", "rloo", "distillation"})


def judge(
    sweep_dir: Path,
    task: RunTask,
    config: Mapping[str, Any],
    script: str,
    command: Sequence[str],
    flags: Mapping[str, str | None],
    *,
    cpu_here: bool,
) -> None:
    """Exit 2 when the run (its config, the command line's ``flags`` over it: a bare ``--use_vllm``
    is true) sets ``use_vllm`` and the run's environment (this one) has no vLLM."""
    from_command = "use_vllm" in flags
    if script not in SCRIPTS or not _wanted(config, flags) or vllm_installed():
        return
    if not installed_source.same_environment(command):
        return
    refusal = ConfigError(
        f"use_vllm is true but vLLM is not installed in the runs' environment: TRL's {script} trainer "
        'raises "vLLM is not available and `use_vllm` is set to True" at each run\'s start',
        location=value_location(sweep_dir, task, "use_vllm", from_command),
        key="use_vllm",
        hint=_HINT_CPU if cpu_here else _HINT,
    )
    refusal.reads = frozenset({"use_vllm"})
    raise refusal


_HINT_CPU = "this machine has no GPU, which vLLM needs: drop use_vllm (TRL then generates with transformers)"
_HINT = "install it (`pip install 'trl[vllm]'`), or drop use_vllm (TRL then generates with transformers)"


def _wanted(config: Mapping[str, Any], flags: Mapping[str, str | None]) -> bool:
    """Whether the run sets ``use_vllm``: the command line's flag over the config's key."""
    if "use_vllm" in flags:
        return command_overrides.flag_bool(flags["use_vllm"]) is True
    return config.get("use_vllm") is True


def vllm_installed() -> bool:
    """Whether this interpreter's environment has vLLM (trl.import_utils.is_vllm_available's lookup)."""
    return importlib.util.find_spec("vllm") is not None
