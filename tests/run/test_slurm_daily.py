"""On the real Slurm (tests/slurm_cluster.py): a trainer that fails and leaves a process
behind frees its run (failed, not "running", nothing left over), and `status` answers from the
status files within its bound when squeue and sacct hang (slurmctld down), with a warning.
(`run --wait` following jobs another `run` submitted: test_slurm_cluster.py.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, make_sweep
from slurm_support import cli, wait_until
from test_slurm_faults import add_resources, wrap_on_path

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.usefixtures("slurm_cluster")]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_failed_trainer_that_leaves_a_process_frees_its_run_on_slurm(cli_cwd):
    make_sweep(cli_cwd, {"a": {"steps": 2, "fail_at": 1, "spawn_child": True}}, sweep="leak")
    add_resources(Path("generated/leak"), time=5)
    result = cli("run", "generated/leak", "--executor", "slurm", "--command", FAKE_COMMAND, "--wait")
    assert result.exit_code == 1, result.output
    child = int((cli_cwd / "runs/leak/a/child.pid").read_text())
    deadline = time.monotonic() + 20
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(child), "the trainer's left-over process outlived its Slurm job"
    rows = wait_until("generated/leak", lambda r: r["a"]["state"] == "FAILED", 30, "a to be failed")
    assert rows["a"]["reason"] == "exit code 3"
    again = cli("run", "generated/leak")  # the recorded command line: Slurm, the fake trainer
    assert again.exit_code == 1, again.output
    assert "failed or were cancelled before" in again.output and "still running" not in again.output


def test_status_answers_from_the_files_when_slurm_hangs(cli_cwd, monkeypatch, tmp_path):
    make_sweep(cli_cwd, {"a": {"steps": 1}}, sweep="down")
    add_resources(Path("generated/down"), time=5)
    assert (
        cli("run", "generated/down", "--executor", "slurm", "--command", FAKE_COMMAND, "--wait").exit_code
        == 0
    )
    for tool in ("squeue", "sacct"):  # slurmctld and slurmdbd not answering
        wrap_on_path(monkeypatch, tmp_path, tool, "sleep 120\n")
    started = time.monotonic()
    shown = cli("status", "generated/down")
    took = time.monotonic() - started
    assert took < 15, took
    assert shown.exit_code == 0, shown.output
    assert "FINISHED" in shown.stdout
    assert "Slurm did not answer within 5 s" in shown.stderr
    assert os.environ["PATH"].split(os.pathsep)[0].endswith("wrapped-bin")
