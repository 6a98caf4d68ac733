"""On a real two-node Slurm: two slurmd (n1, n2) on this machine, each its own port
(tests/slurm_cluster.py ``slurm_cluster_2n``), so a job of ``--nodes=2`` really gets two nodes,
SLURM_NODEID 0 and 1, and one task of the job step on each.

- 2 nodes x 2 processes under torchrun (one torchrun per node, --node-rank from SLURM_NODEID) and
  under srun (4 ranks from Slurm): all four ranks meet (gloo all_reduce), node 1's output goes
  to its own log, and only node 0's participant (rank 0) writes the status, once;
- `scontrol requeue` of a 2-node run: both nodes end, the job runs again on both, and the run
  resumes from its checkpoint exactly;
- `sweepgen cancel` stops both nodes: no rank, torchrun or participant is left.

The cluster has no accounting (sacct): sweepgen follows the jobs through squeue, as it does when
slurmdbd is down.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from multiproc_support import (
    PROBE_COMMAND,
    WAIT_S,
    expected_acc,
    processes_naming,
    requeue_and_resume,
    shape,
    starts,
)
from run_support import FAKE_COMMAND, make_sweep
from slurm_support import cli, status_json, wait_until

from sweepgen.run.logs.progress import ATTEMPT_MARK

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.slow,
    pytest.mark.train,
    pytest.mark.usefixtures("slurm_cluster_2n"),
]


@pytest.fixture
def cwd(cli_cwd, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return cli_cwd


@pytest.mark.parametrize("launcher", ["torchrun", "srun"])
def test_two_nodes_of_two_processes_meet_and_node_0_writes_the_status(cwd, launcher):
    sweep = f"twonodes{launcher}"
    shape(make_sweep(cwd, {"p": {"steps": 3}}, sweep=sweep), launcher, procs=2, nodes=2)
    result = cli("run", f"generated/{sweep}", "--executor", "slurm", "--command", PROBE_COMMAND, "--wait")
    run_dir = cwd / "runs" / sweep / "p"
    assert result.exit_code == 0, result.output + (run_dir / "run.log").read_text()
    row = status_json(f"generated/{sweep}")["p"]
    assert (row["state"], row["attempt"]) == ("FINISHED", 1), row
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary == {"acc": expected_acc(4, 3), "world": 4, "steps": 3}
    ranks = starts(run_dir)
    assert sorted(r["rank"] for r in ranks) == [0, 1, 2, 3]
    assert sorted(r["local_rank"] for r in ranks) == ["0", "0", "1", "1"]  # two per node
    status = json.loads((run_dir / "sweepgen_status.json").read_text())
    assert status["ids"]["slurm_nodes"] == "n[1-2]"  # the job spanned both nodes
    assert (run_dir / "run.log").read_text().count(ATTEMPT_MARK) == 1
    others = sorted(p.name for p in run_dir.glob("run.*.log"))
    if launcher == "torchrun":
        assert others == ["run.node1.log"]  # node 1's torchrun and its two workers
    else:
        assert others == ["run.rank1.log", "run.rank2.log", "run.rank3.log"]
    for log in others:
        assert ATTEMPT_MARK not in (run_dir / log).read_text()  # none of them kept the status


def test_cancel_stops_every_node(cwd):
    sweep = "twonodescancel"
    shape(make_sweep(cwd, {"p": {"steps": 2000, "sleep": 0.2}}, sweep=sweep), "torchrun", nodes=2)
    assert cli("run", f"generated/{sweep}", "--executor", "slurm", "--command", PROBE_COMMAND).exit_code == 0
    run_dir = cwd / "runs" / sweep / "p"
    config = f"generated/{sweep}/p.yaml"

    def all_running(rows):
        return rows["p"]["state"] == "RUNNING" and len(list((run_dir / "pids").glob("rank*"))) == 4

    wait_until(f"generated/{sweep}", all_running, WAIT_S, "the four ranks to run")
    assert len(processes_naming(config)) >= 6  # two torchrun, four ranks
    cancelled = cli("cancel", f"generated/{sweep}")
    assert cancelled.exit_code == 0, cancelled.output
    assert status_json(f"generated/{sweep}")["p"]["state"] == "CANCELLED"
    deadline = time.monotonic() + 60
    while processes_naming(config):
        assert time.monotonic() < deadline, f"still running after cancel: {processes_naming(config)}"
        time.sleep(0.5)
    assert not (run_dir / ".sweepgen_ranks").exists()  # a cancel is Slurm's to tell, not a failure


def test_a_requeued_two_node_run_resumes_exactly(cwd):
    # srun here (torchrun is requeued on one node in test_slurm_multiproc.py): 4 ranks on 2 nodes
    requeue_and_resume(cwd, "twonodesrequeue", "srun", nodes=2)


def test_a_supervisor_that_finds_the_runs_lock_held_ends_the_job_at_once_and_status_says_why(cwd, tmp_path):
    """Node 0's participant finds the run's lock held by another process (here: this test), so it
    starts nothing (exit 3); node 1's participant, whose own look said yes, has started its share.
    Node 0's decline note stops node 1 at once (before: it left none, and node 1 waited for rank 0
    until the job's time limit), and `status` says why the job started nothing (before: "Slurm
    FAILED (exit 3) before the run recorded its end")."""
    import subprocess

    from sweepgen.run.core import runlock

    sweep = "twonodeslockheld"
    hold = tmp_path / "hold"  # node 1's share runs until stopped (never writes summary.json)
    hold.touch()
    folder = make_sweep(cwd, {"p": {"steps": 1, "hold_file": str(hold)}}, sweep=sweep)
    shape(folder, "none", procs=1, nodes=2)
    run_dir = cwd / "runs" / sweep / "p"
    run_dir.mkdir(parents=True)
    # the job waits behind a job holding both nodes while this test takes the run's lock (`run`
    # would not submit a run whose lock is held)
    blocker = subprocess.run(
        ["sbatch", "--parsable", "--nodes=2", "--exclusive", "--wrap", "sleep 600", f"--chdir={tmp_path}"],
        check=True, capture_output=True, text=True,
    ).stdout.strip().split(";")[0]  # fmt: skip
    held = None
    try:
        result = cli("run", f"generated/{sweep}", "--executor", "slurm", "--command", FAKE_COMMAND)
        assert result.exit_code == 0, result.output
        held = runlock.acquire(run_dir)
        assert held is not None
    finally:
        subprocess.run(["scancel", blocker], check=True)
    try:
        rows = wait_until(
            f"generated/{sweep}", lambda r: r["p"]["state"] == "FAILED", 90, "the job to end at once"
        )
    finally:
        hold.unlink()
        os.close(held)
    reason = rows["p"]["reason"]
    assert "started nothing: the run is locked by another process" in reason, reason
    assert "declined, exit 3" in reason, reason
    assert not (run_dir / "summary.json").exists()
    deadline = time.monotonic() + 60  # node 1's share (its fake trainer) stopped, not left waiting
    while processes_naming(f"generated/{sweep}/p.yaml"):
        assert time.monotonic() < deadline, "node 1's share still runs"
        time.sleep(0.2)
