"""What `run` refuses in the runs' rendered trainer configs before any starts: one vLLM server for
runs at once (vllm_server), runs differing only in a value TRL ignores (trl_ignored), a reward
function TRL cannot load (trl_rewards), more accelerate processes than a run's GPUs
(trl_processes), an ``env:`` block choosing the GPUs (trl_env), a GRPO generation batch TRL
refuses at the run's process count (trl_generation). A key the command line sets as a flag
(``--use_peft``, ``--num_generations 4``) is TRL's over the config: what reads it is not judged.

Each run's rendered config is read once (config_where.rendered) and handed to each judgment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweepgen.run.core import (
    command_overrides,
    installed_source,
    trl_env,
    trl_generation,
    trl_ignored,
    trl_processes,
    trl_rewards,
    vllm_server,
)
from sweepgen.run.core.base import RunTask
from sweepgen.run.core.config_where import rendered
from sweepgen.run.core.trl_output_dir import trl_script


def check(
    sweep_dir: Path,
    command: Sequence[str] | None,
    tasks: Sequence[RunTask],
    at_once: int,
    executor: str,
    gpus_each: int | None,
) -> None:
    """Exit 2 when the ``tasks`` about to start (``at_once`` of them together, by ``executor``, each
    given ``gpus_each`` GPUs, None: not limited) would share a vLLM server or, run by ``command``
    as TRL's training script, fail or train alike as the module's docstring lists."""
    script = trl_script(command or ())
    if at_once < 2 and script is None:
        return  # nothing to judge: no config is read
    configs = [(task, rendered(sweep_dir, task)) for task in tasks]
    _refuse(vllm_server.shared_among(sweep_dir, configs, at_once, executor))
    if script is not None:
        _judge_trl(sweep_dir, configs, script, command or (), gpus_each)


def _refuse(error: Exception | None) -> None:
    if error is not None:
        raise error


def _judge_trl(
    sweep_dir: Path,
    configs: Sequence[tuple[RunTask, Mapping[str, Any]]],
    script: str,
    command: Sequence[str],
    gpus_each: int | None,
) -> None:
    """Exit 2 when the runs differ only in a value TRL ignores, else at the first run (in order)
    naming a reward function TRL cannot load, asking (each run given ``gpus_each`` GPUs) for more
    processes or other GPUs, or sizing a generation batch TRL refuses."""
    on_command_line = command_overrides.flags_set(command)  # TRL takes these over the config
    trl_ignored.check(sweep_dir, configs, on_command_line)
    sized_by_config = not on_command_line & trl_generation.READS
    counts = trl_processes.launch_counts(command)  # the command line and its launch config, read once
    defaults = installed_source.same_environment(command)  # the classes installed here are the run's
    for task, config in configs:
        if "reward_funcs" not in on_command_line:
            trl_rewards.judge(sweep_dir, task, config, script, command)
        if gpus_each is not None:
            trl_processes.judge(sweep_dir, task, config, counts, gpus_each)
            trl_env.judge(sweep_dir, task, config, gpus_each)
        # one GPU a run: accelerate starts one process, unless a count is asked for (judged above)
        processes = trl_processes.asked(config, counts) or (1 if gpus_each == 1 else None)
        if sized_by_config:
            trl_generation.judge(sweep_dir, task, config, script, processes, defaults=defaults)
