"""W&B tags are the values runs differ by, never a per-run folder or name (output_dir, run_name)."""

from __future__ import annotations

from pathlib import Path

from sweepgen.run.core.base import RunTask
from sweepgen.run.core.plan.trackers import tracker_env


def test_naming_paths_are_not_tags():
    values = {"beta": 0.04, "output_dir": "runs/g/beta0.04_seed1", "seed": 1, "logging.run_name": "x"}
    task = RunTask(
        "beta0.04_seed1", "beta0.04_seed1", Path("a.yaml"), Path("runs/g/a"), ("true",), values=values
    )
    env = tracker_env(task, "g")
    assert env["WANDB_TAGS"] == "beta=0.04,seed=1"
    assert env["WANDB_NAME"] == "beta0.04_seed1" and env["WANDB_RUN_GROUP"] == "g"
    # W&B's local files (an offline run's only record) in the run's folder, where `report` reads them
    assert env["WANDB_DIR"] == str(Path("runs/g/a").resolve())
