"""Which process of a multi-process run this is, from the launcher's environment (torchrun and
``accelerate launch`` set ``RANK``/``WORLD_SIZE``; Slurm's srun sets ``SLURM_PROCID``/``SLURM_NTASKS``).

Under DDP every rank trains (TRL splits each generation batch over the ranks and gathers the logged
metrics and completions to every rank), but only rank 0 writes the run directory's files
(config.yaml, metrics.jsonl, samples.jsonl, summary.json), prints to run.log and talks to the
trackers: each row once, however many processes there are. Torch-free: read before torch loads.
"""

from __future__ import annotations

import os
from typing import Any


def _int(*names: str, default: int) -> int:
    for name in names:
        value = os.environ.get(name)
        if value is not None and value.strip().isdigit():
            return int(value)
    return default


def rank() -> int:
    """This process's global rank (0 without a launcher)."""
    return _int("RANK", "SLURM_PROCID", default=0) if world_size() > 1 else 0


def world_size() -> int:
    """How many processes train the run together (1 without a launcher)."""
    return _int("WORLD_SIZE", default=1)


def is_main() -> bool:
    """Whether this process writes the run's files (rank 0, or the only process)."""
    return rank() == 0


def device_kwargs() -> dict[str, Any]:
    """GRPOConfig arguments a multi-process run needs: on a machine without CUDA, ``use_cpu`` (without
    it transformers trains each rank alone, as if no launcher had started it, and only warns)."""
    if world_size() == 1:
        return {}
    import torch  # noqa: PLC0415 - lazy: only a multi-process run asks, as it starts training

    return {} if torch.cuda.is_available() else {"use_cpu": True}
