"""What every run's command finds in its environment so its runs line up in W&B and TensorBoard,
whichever trainer it is: the sweep (its generated folder's name) as the W&B group, the run name as
the W&B name, the varying values as W&B tags, a TensorBoard run name (``<sweep>/<run>``) a
trainer can use as its log subfolder, and ``TENSORBOARD_DIR``, the run folder's ``tensorboard/``
(absolute): where verl and the trainers built on it (slime...) write their TensorBoard events, else
``tensorboard_log/<project>/<experiment>`` under the working folder, outside the run folder `report`
reads, and one folder for every run of a sweep that leaves the experiment name alone; and
``WANDB_DIR``, the run folder, so W&B's local files (``wandb/offline-run-*``) are the run's. Set for every
run by both executors; they replace values the shell had.
"""

from __future__ import annotations

import os

from sweepgen.run.core.base import RunTask
from sweepgen.run.core.plan.tasks import NAMING_PATHS

MAX_TAG_CHARS = 64  # W&B refuses longer tags


def tracker_env(task: RunTask, sweep: str) -> dict[str, str]:
    tags = [
        _tag(path, value)
        for path, value in sorted(task.values.items())
        if path.rsplit(".", 1)[-1] not in NAMING_PATHS  # a per-run folder or name: not a tag to filter by
    ]
    return {
        "WANDB_RUN_GROUP": sweep,
        "WANDB_NAME": task.name,
        "WANDB_TAGS": ",".join(tags),  # comma-separated, as wandb reads it
        "TENSORBOARD_RUN_NAME": f"{sweep}/{task.name}",
        "SWEEPGEN_SWEEP": sweep,
        "SWEEPGEN_RUN_NAME": task.name,
        "SWEEPGEN_RUN_DIR": task.run_dir.as_posix(),
        "TENSORBOARD_DIR": os.path.join(os.path.abspath(task.run_dir), "tensorboard"),
        # wandb's local files (an offline run's only record) in the run folder, where `report` reads
        # them, as the bundled trainer puts them; not one ./wandb/ for every run of every sweep
        "WANDB_DIR": os.path.abspath(task.run_dir),
    }


def _tag(path: str, value: object) -> str:
    """``path=value``, short enough for W&B, without the comma that separates tags."""
    text = f"{path.rsplit('.', 1)[-1]}={value}".replace(",", ";")
    return text[:MAX_TAG_CHARS]
