"""Helpers of the tests on the real Slurm: drive the CLI, read `status --format json`, wait for it."""

from __future__ import annotations

import json
import math
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from sweepgen.cli import main


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def status_json(sweep_dir: str) -> dict[str, dict[str, Any]]:
    result = cli("status", sweep_dir, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return {row["run"]: row for row in json.loads(result.stdout)}


def wait_until(
    sweep_dir: str, done: Callable[[dict[str, dict[str, Any]]], bool], timeout: float, what: str
) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        rows = status_json(sweep_dir)
        if done(rows):
            return rows
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {rows}"
        time.sleep(0.25)  # a look is one in-process `status` (squeue, sacct): the state is seen as it comes


def start_requeued_now(job_id: str) -> None:
    """A requeued job made eligible now (Slurm otherwise holds it about two minutes), once the clock
    has left the second its last instance ended in. The caller has seen squeue say PENDING (not
    COMPLETING: every node's slurmd has ended that instance and revoked its credential) with the
    instance's processes gone; slurmd refuses a credential of the same job made in the second of
    that revocation or before ("Killing non-startable batch JobId=73: Job credential revoked"): the
    requeued job then ended without running, as a rehearsal saw. Those states end the race: no
    fixed wait besides."""
    pending_at = time.time()
    while time.time() < math.floor(pending_at) + 2:  # whole seconds, as Slurm compares them
        time.sleep(0.05)
    subprocess.run(
        ["scontrol", "update", f"jobid={job_id}", "StartTime=now"],
        check=True,
        capture_output=True,
        timeout=30,
    )


def journal_ids(runs_root: Path, name: str, job_id: str) -> dict[str, object]:
    """The ids of a node task for run ``name`` as a submission writes them, with the jobs journal
    of ``runs_root`` naming ``job_id`` as that run's job (a node task refuses without both)."""
    folder = runs_root / ".sweepgen_slurm"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "jobs.json"
    journal = json.loads(path.read_text()) if path.exists() else {"arrays": []}
    journal["arrays"].append({"array_job_id": job_id.split("_")[0], "runs": {job_id: name}})
    path.write_text(json.dumps(journal))
    return {"job_name": "sweepgen-node", "submitit_folder": str(folder)}
