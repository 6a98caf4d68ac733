"""On the real Slurm (tests/slurm_cluster.py): a run of several processes in one job.

- 1 node x 2 processes under torchrun, srun and accelerate: the ranks find each other (a gloo
  all_reduce at every step, tests/fixtures/ddp_steps_probe.py), the run happens once, its status is
  written by one supervisor only;
- `scontrol requeue` (what preemption does) of a 2-process run: the whole run starts again in the
  same job and resumes from its checkpoint exactly (the probe's accumulator proves no step was
  skipped or repeated);
- `sweepgen cancel` leaves no rank, launcher or wrapper running.
"""

from __future__ import annotations

import json
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
from run_support import make_sweep
from slurm_support import cli, status_json, wait_until

from sweepgen.run.logs.progress import ATTEMPT_MARK

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.slow,
    pytest.mark.train,
    pytest.mark.usefixtures("slurm_cluster"),
]


@pytest.fixture
def cwd(cli_cwd, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the job inherits it: two ranks on few cores
    return cli_cwd


@pytest.mark.parametrize("launcher", ["torchrun", "srun", "accelerate"])
def test_two_processes_on_one_node_meet_and_the_status_is_written_once(cwd, launcher):
    sweep = f"meet{launcher}"
    shape(make_sweep(cwd, {"p": {"steps": 3}}, sweep=sweep), launcher)
    result = cli("run", f"generated/{sweep}", "--executor", "slurm", "--command", PROBE_COMMAND, "--wait")
    run_dir = cwd / "runs" / sweep / "p"
    assert result.exit_code == 0, result.output + (run_dir / "run.log").read_text()
    row = status_json(f"generated/{sweep}")["p"]
    assert (row["state"], row["attempt"]) == ("FINISHED", 1), row
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary == {"acc": expected_acc(2, 3), "world": 2, "steps": 3}  # every step, both ranks
    ranks = starts(run_dir)
    assert sorted(r["rank"] for r in ranks) == [0, 1] and len({r["pid"] for r in ranks}) == 2
    assert {r["world"] for r in ranks} == {2} and sorted(r["local_rank"] for r in ranks) == ["0", "1"]
    # one supervisor: one attempt recorded, one start in run.log, one status owner
    log = (run_dir / "run.log").read_text()
    assert log.count(ATTEMPT_MARK) == 1, log
    status = json.loads((run_dir / "sweepgen_status.json").read_text())
    assert status["state"] == "finished" and status["attempt"] == 1
    if launcher == "srun":
        assert (run_dir / "run.rank1.log").exists()  # rank 1 ran beside the supervisor, its output apart
        assert ATTEMPT_MARK not in (run_dir / "run.rank1.log").read_text()
    else:
        assert not list(run_dir.glob("run.node*.log"))  # one node: the launcher's parent supervises
    # the one note is the supervisor's clean end (what would stop a participant left waiting)
    notes = [json.loads(p.read_text()) for p in (run_dir / ".sweepgen_ranks").iterdir()]
    label = "rank0" if launcher == "srun" else "node0"
    assert [(n["label"], n["exit_code"]) for n in notes] == [(label, 0)], notes


def test_a_requeued_two_process_run_resumes_exactly(cwd):
    requeue_and_resume(cwd, "requeue", "torchrun", nodes=1)


@pytest.mark.parametrize("launcher", ["torchrun", "srun"])
def test_cancel_leaves_no_rank_running(cwd, launcher):
    sweep = f"cancel{launcher}"
    shape(make_sweep(cwd, {"p": {"steps": 2000, "sleep": 0.2}}, sweep=sweep), launcher)
    assert cli("run", f"generated/{sweep}", "--executor", "slurm", "--command", PROBE_COMMAND).exit_code == 0
    run_dir = cwd / "runs" / sweep / "p"
    config = str((cwd / "generated" / sweep / "p.yaml").relative_to(cwd))

    def both_running(rows):
        return rows["p"]["state"] == "RUNNING" and len(list((run_dir / "pids").glob("rank*"))) == 2

    wait_until(f"generated/{sweep}", both_running, WAIT_S, "both ranks to run")
    # both ranks (and torchrun, their parent, under it)
    assert len(processes_naming(config)) >= (3 if launcher == "torchrun" else 2)
    cancelled = cli("cancel", f"generated/{sweep}")
    assert cancelled.exit_code == 0, cancelled.output
    assert status_json(f"generated/{sweep}")["p"]["state"] == "CANCELLED"
    deadline = time.monotonic() + 60
    while processes_naming(config):  # Slurm ended the job; nothing of the run may outlive it
        assert time.monotonic() < deadline, f"still running after cancel: {processes_naming(config)}"
        time.sleep(0.5)
