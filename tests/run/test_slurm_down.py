"""With the Slurm controller down, `run --executor slurm` and `cancel` fail within seconds (the
controller is asked once with `scontrol ping`), and `status` answers from the status files.

Slurm's client commands are stand-ins earlier on PATH: `scontrol ping` says DOWN, and every other
command hangs, as each does (with its own retries) when slurmctld does not answer.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import FAKE_COMMAND, make_sweep

from sweepgen.cli import main
from sweepgen.run.core.base import RunState, RunStatus, write_status
from sweepgen.run.slurm import query as slurm_query

PING_DOWN = 'echo "Slurmctld(primary) at ctl is DOWN"; exit 1\n'
HANG = "sleep 60\n"
# a command that waited on a hanging stand-in would take 60 s; below that, a loaded machine is slow, not red
BOUND_S = 45


@pytest.fixture
def slurm_down(cli_cwd, monkeypatch):
    bindir = cli_cwd / "slurm-bin"
    bindir.mkdir()
    for tool in ("sbatch", "srun", "squeue", "sacct", "scancel", "scontrol"):
        path = bindir / tool
        body = '[ "$1" = ping ] && { ' + PING_DOWN.strip() + "; }\n" + HANG if tool == "scontrol" else HANG
        path.write_text("#!/bin/bash\n" + body)
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(slurm_query, "_controller_ok_at", float("-inf"))
    make_sweep(cli_cwd, {"a": {}})
    lock = cli_cwd / "generated/fake/sweep.lock.json"
    data = json.loads(lock.read_text())
    data["resources"] = {"time": 5}
    lock.write_text(json.dumps(data))
    return cli_cwd


def _timed(*args: str):
    started = time.monotonic()
    result = CliRunner().invoke(main, list(args))
    return result, time.monotonic() - started


@pytest.mark.slurm  # needs the [slurm] extra (submitit; without it `run` says so first), not a cluster
def test_run_on_slurm_fails_at_once_when_the_controller_is_down(slurm_down):
    result, took = _timed("run", "generated/fake", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert result.exit_code == 2, result.output
    assert (
        "the Slurm controller is down (`scontrol ping`: Slurmctld(primary) at ctl is DOWN)" in result.stderr
    )
    assert took < BOUND_S, took


def test_cancel_fails_at_once_and_status_answers_from_the_files(slurm_down):
    run_dir = Path("runs/fake/a")
    run_dir.mkdir(parents=True)
    write_status(run_dir, RunStatus(RunState.RUNNING, "slurm", ids={"job_id": "41_0"}))
    result, took = _timed("cancel", "generated/fake")
    assert result.exit_code == 2 and "controller is down" in result.stderr, result.output
    assert took < BOUND_S, took
    result, took = _timed("status", "generated/fake", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["state"] == "RUNNING"
    assert "Slurm could not be asked (the Slurm controller is down" in result.stderr
    assert took < BOUND_S, took


def test_run_on_slurm_without_submitit_names_the_extra(slurm_down, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "submitit" else real(name, *a)
    )
    result, _ = _timed("run", "generated/fake", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert result.exit_code == 2 and "pip install 'sweepgen[slurm]'" in result.stderr, result.output
