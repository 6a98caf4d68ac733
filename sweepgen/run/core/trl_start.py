"""What `run` refuses in the runs' rendered trainer configs before any starts: one vLLM server for
runs at once (vllm_server), more accelerate processes than a run's GPUs (trl_processes), an
``env:`` block choosing the GPUs (trl_env).

Each run's rendered config is read once (config_where.rendered) and handed to each judgment.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sweepgen.run.core import trl_env, trl_processes, vllm_server
from sweepgen.run.core.base import RunTask
from sweepgen.run.core.config_where import rendered
from sweepgen.run.core.trl_output_dir import trl_training


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
    as TRL's training script, ask for other GPUs or more processes than they are given."""
    judged = gpus_each is not None and command is not None and trl_training(command)
    if at_once < 2 and not judged:
        return  # nothing to judge: no config is read
    configs = [(task, rendered(sweep_dir, task)) for task in tasks]
    shared = vllm_server.shared_among(sweep_dir, configs, at_once, executor)
    if shared is not None:
        raise shared
    if not judged:
        return
    assert command is not None and gpus_each is not None  # (judged: mypy)
    counts = trl_processes.launch_counts(command)  # the command line and its launch config, read once
    for task, config in configs:
        trl_processes.judge(sweep_dir, task, config, counts, gpus_each)
        trl_env.judge(sweep_dir, task, config, gpus_each)
