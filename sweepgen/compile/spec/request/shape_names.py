"""The names of a run's shape keys and launchers, without the spec model (pydantic): the run side
reads them back from the lock through ``compile.run_api`` and must stay light for `status`."""

from __future__ import annotations

LAUNCHERS = ("torchrun", "accelerate", "srun", "none")
SHAPE_KEYS = ("nodes", "gpus_per_node", "procs_per_node", "launcher")
