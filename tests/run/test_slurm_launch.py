"""How a multi-process run starts inside its Slurm job (sweepgen.run.slurm.launch), without a
cluster: the launcher argv and rendezvous every participant derives, who supervises, the job step,
and the dry run that shows it. The real-cluster runs are in test_slurm_multiproc.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from run_support import FAKE_COMMAND, make_sweep
from slurm_support import journal_ids

from sweepgen.cli import main
from sweepgen.run.core.shape import RunShape
from sweepgen.run.slurm import launch

RDZV = launch.Rendezvous(master_addr="10.0.0.7", master_port="21234", node_rank="1")


def test_torchrun_gets_the_shape_the_rendezvous_and_the_command_verbatim():
    shape = RunShape(nodes=2, gpus_per_node=4, procs_per_node=4, launcher="torchrun")
    argv = launch.argv_for(shape, ["python", "-m", "verl.trainer", "x=1"], RDZV, ["/bin/torchrun"])
    assert argv == [
        "/bin/torchrun",
        "--nnodes=2",
        "--nproc-per-node=4",
        "--node-rank=1",
        "--master-addr=10.0.0.7",
        "--master-port=21234",
        "--no-python",
        "python",
        "-m",
        "verl.trainer",
        "x=1",
    ]


def test_accelerate_counts_processes_over_all_machines_and_uses_its_multi_process_launcher():
    gpu = RunShape(nodes=2, gpus_per_node=8, procs_per_node=8, launcher="accelerate")
    argv = launch.argv_for(gpu, ["python", "train.py"], RDZV, ["accelerate", "launch"])
    assert argv[:2] == ["accelerate", "launch"]
    assert {"--num_machines=2", "--num_processes=16", "--machine_rank=1", "--multi_gpu"} <= set(argv)
    assert "--main_process_ip=10.0.0.7" in argv and "--main_process_port=21234" in argv
    assert argv[-3:] == ["--no_python", "python", "train.py"] and "--cpu" not in argv
    # on CPU too: --cpu would make accelerate start one process (its simple launcher) whatever
    # --num_processes says; --multi_gpu is its torch.distributed launcher, GPUs or not
    cpu = RunShape(nodes=1, gpus_per_node=0, procs_per_node=2, launcher="accelerate")
    argv = launch.argv_for(cpu, ["python", "train.py"], RDZV, ["accelerate", "launch"])
    assert "--multi_gpu" in argv and "--cpu" not in argv
    one = RunShape(nodes=1, gpus_per_node=0, procs_per_node=1, launcher="accelerate")
    argv = launch.argv_for(one, ["python", "train.py"], RDZV, ["accelerate", "launch"])
    assert "--cpu" in argv and "--multi_gpu" not in argv


@pytest.mark.parametrize("launcher", ["srun", "none"])
def test_srun_and_none_run_the_command_itself(launcher):
    shape = RunShape(
        nodes=2, gpus_per_node=0, procs_per_node=2 if launcher == "srun" else 1, launcher=launcher
    )
    assert launch.argv_for(shape, ["./train.sh", "a b"], RDZV, []) == ["./train.sh", "a b"]


def test_srun_ranks_get_their_identity_from_slurms_variables():
    shape = RunShape(nodes=2, gpus_per_node=2, procs_per_node=2, launcher="srun")
    slurm = {"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1"}
    env = launch.env_for(shape, RDZV, slurm)
    assert env == {
        "MASTER_ADDR": "10.0.0.7",
        "MASTER_PORT": "21234",
        "NNODES": "2",
        "NODE_RANK": "1",
        "RANK": "3",
        "WORLD_SIZE": "4",
        "LOCAL_RANK": "1",
        "LOCAL_WORLD_SIZE": "2",
    }
    torchrun = launch.env_for(RunShape(nodes=2, procs_per_node=2, launcher="torchrun"), RDZV, slurm)
    assert "RANK" not in torchrun and "WORLD_SIZE" not in torchrun  # torchrun sets them per worker


def test_the_supervisor_is_node_0s_participant_or_srun_rank_0():
    per_node = RunShape(nodes=2, procs_per_node=2, launcher="torchrun")
    node1 = launch.participant(per_node, {"SLURM_NODEID": "1", "SLURM_PROCID": "1"})
    node0 = launch.participant(per_node, {"SLURM_NODEID": "0", "SLURM_PROCID": "0"})
    assert (node0.supervisor, node1.supervisor, node1.label) == (True, False, "node1")
    ranks = RunShape(nodes=2, procs_per_node=2, launcher="srun")
    rank1 = launch.participant(ranks, {"SLURM_NODEID": "0", "SLURM_PROCID": "1", "SLURM_LOCALID": "1"})
    rank2 = launch.participant(ranks, {"SLURM_NODEID": "1", "SLURM_PROCID": "2", "SLURM_LOCALID": "0"})
    rank0 = launch.participant(ranks, {"SLURM_NODEID": "0", "SLURM_PROCID": "0"})
    assert (rank0.supervisor, rank1.supervisor, rank2.supervisor) == (True, False, False)
    assert (rank1.label, rank2.label) == ("rank1", "rank2")


def test_the_job_step_runs_one_task_per_node_holding_its_cpus_unless_srun_launches():
    torchrun = RunShape(nodes=3, gpus_per_node=4, procs_per_node=4, launcher="torchrun")
    assert launch.step_srun_args(torchrun, cpus_per_proc=2) == [
        "--nodes=3",
        "--ntasks=3",
        "--ntasks-per-node=1",
        "--cpus-per-task=8",
    ]
    assert launch.step_srun_args(RunShape(nodes=3, procs_per_node=4, launcher="srun"), 2) == []
    assert launch.step_srun_args(RunShape(), 2) == []  # one process: the step as it always was
    assert not launch.multi(RunShape()) and not launch.multi(None)
    assert launch.multi(RunShape(nodes=2)) and launch.multi(RunShape(launcher="torchrun"))


@given(st.integers(min_value=1, max_value=2**40))
def test_the_port_is_a_function_of_the_job_id_in_a_safe_range(job_id):
    port = launch.port_for(job_id)
    assert launch.PORT_BASE <= port < launch.PORT_BASE + launch.PORT_SPAN
    assert port == launch.port_for(job_id)  # every rank of the job derives the same one
    assert launch.port_for(job_id + 1) != port  # consecutive jobs on a node never collide


def test_the_time_limit_warning_reaches_launchers_as_sigterm():
    torchrun = RunShape(launcher="torchrun")
    assert launch.forwarded(signal.SIGUSR2, torchrun) == signal.SIGTERM
    assert launch.forwarded(signal.SIGTERM, torchrun) == signal.SIGTERM
    assert launch.forwarded(signal.SIGUSR2, RunShape(launcher="srun")) == signal.SIGUSR2
    assert launch.forwarded(signal.SIGUSR2, None) == signal.SIGUSR2


def test_the_rendezvous_is_asked_of_slurm_inside_the_job(monkeypatch, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    scontrol = bindir / "scontrol"
    scontrol.write_text(
        "#!/bin/bash\n"
        'if [ "$2" = hostnames ]; then printf "gpu-a07\\ngpu-a08\\n"; exit 0; fi\n'
        'if [ "$2" = node ]; then echo "NodeName=$4 NodeAddr=10.1.2.3 NodeHostName=$4"; exit 0; fi\n'
        "exit 1\n"
    )
    scontrol.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    env = {"SLURM_JOB_ID": "123457", "SLURM_JOB_NODELIST": "gpu-a[07-08]", "SLURM_NODEID": "1"}
    rdzv = launch.rendezvous(env)
    assert rdzv == launch.Rendezvous("10.1.2.3", str(launch.port_for(123457)), "1")
    with pytest.raises(RuntimeError, match="not inside a Slurm job"):
        launch.rendezvous({"SLURM_NODEID": "0"})


def add_resources(folder: Path, **resources) -> None:
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"] = resources
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


@pytest.mark.slurm  # needs the [slurm] extra (submitit), not a running Slurm
@pytest.mark.parametrize("launcher", ["torchrun", "srun"])
def test_dry_run_shows_the_header_the_step_and_each_nodes_launch(cli_cwd, launcher):
    folder = make_sweep(cli_cwd, {"a": {}}, sweep="fake")
    add_resources(
        folder, time=30, cpus_per_run=2, nodes=2, gpus_per_node=4, procs_per_node=4, launcher=launcher
    )
    before = sorted(cli_cwd.rglob("*"))
    result = CliRunner().invoke(
        main, ["run", "generated/fake", "--executor", "slurm", "--dry-run", "--command", FAKE_COMMAND]
    )
    assert result.exit_code == 0, result.output
    out = result.output
    for line in ("#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4", "#SBATCH --gpus-per-node=4"):
        assert line in out
    assert "2 node(s) x 4 process(es) (world size 8)" in out
    if launcher == "torchrun":
        assert "job step: srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=8" in out
        assert "torchrun --nnodes=2 --nproc-per-node=4 '--node-rank=$SLURM_NODEID'" in out
        assert "'--master-addr=<first host of $SLURM_JOB_NODELIST>'" in out
        assert "node 0's participant" in out
    else:
        assert "Slurm starts 4 rank(s) per node" in out and "RANK=$SLURM_PROCID" in out
        assert "WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID" in out
        assert "written by rank 0" in out
    assert sorted(cli_cwd.rglob("*")) == before


# -- the participants as real processes (no cluster: Slurm's variables and a stand-in scontrol) ----


RANK_SCRIPT = """
import os, sys, time
rank = int(os.environ["RANK"])
open(f"rank{rank}.pid", "w").write(str(os.getpid()))
env = os.environ
print(f"rank {rank} of {env['WORLD_SIZE']} meets at {env['MASTER_ADDR']}:{env['MASTER_PORT']}", flush=True)
mode = os.environ["PROBE_MODE"]
if mode == "rank1 fails" and rank == 1:
    while not os.path.exists("rank0.pid"):
        time.sleep(0.05)
    sys.exit(4)
if mode == "orphan":
    import subprocess
    if rank == 1:  # a worker in a session of its own, as torchrun starts them, left behind
        orphan = subprocess.Popen(["sleep", "600"], start_new_session=True)
        open("orphan.pid", "w").write(str(orphan.pid))
        sys.exit(0)
    while not os.path.exists("orphan.pid"):
        time.sleep(0.05)
    sys.exit(0)
if mode == "until go, 0 on a stop":  # a trainer that saves on SIGTERM and exits 0
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    mode = "until go"
if mode == "until go":  # each rank counts its start, then runs until the test says go
    open(f"starts.rank{rank}", "a").write("start\\n")
    while not os.path.exists("go"):
        time.sleep(0.05)
    sys.exit(0)
if mode == "rank0 ends" and rank == 0:
    while not os.path.exists("rank1.pid"):
        time.sleep(0.05)
    sys.exit(0)
time.sleep(600)
"""


def start_participant(
    tmp_path: Path,
    procid: int,
    shape: RunShape,
    mode: str,
    *,
    end_grace_s: float | None = None,
    journal: bool = True,
) -> subprocess.Popen:
    """A participant as Slurm starts it; ``end_grace_s`` replaces ranks.END_GRACE_S in that process
    (the product's 30 s would be this test's whole time)."""
    import pickle

    from sweepgen.run.core.base import RunState, RunStatus
    from sweepgen.run.slurm.task import NodeTask

    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    # the job below, named in the jobs journal (without: a task with no journal folder to check)
    ids = journal_ids(tmp_path / "runs/node", "n", "77") if journal else {"job_name": "sweepgen-node"}
    status = RunStatus(RunState.RUNNING, "slurm", ids=ids, done_file=None)
    node = NodeTask(
        name="n",
        argv=(sys.executable, str(script)),
        cwd=str(tmp_path / "runs/node/n"),
        run_dir=".",
        status=status,
        shape=shape,
    )
    blob = tmp_path / f"node{procid}.pkl"
    blob.write_bytes(pickle.dumps(node))
    grace = ""
    if end_grace_s is not None:
        grace = f"from sweepgen.run.slurm import ranks; ranks.END_GRACE_S = {end_grace_s!r}; "
    code = (
        f"import pickle; {grace}from sweepgen.run.slurm.task import run_on_node; "
        f"run_on_node(pickle.loads(open({str(blob)!r}, 'rb').read()))"
    )
    env = {
        **os.environ,
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "SLURM_JOB_ID": "77",
        "SLURM_JOB_NODELIST": "localhost",
        "SLURM_NODEID": str(procid if shape.nodes > 1 else 0),  # srun: one rank per node
        "SLURM_PROCID": str(procid),
        "SLURM_LOCALID": str(procid),
        "SLURM_NTASKS": "2",
        "PROBE_MODE": mode,
    }
    return subprocess.Popen([sys.executable, "-c", code], env=env)


def stand_in_scontrol(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    scontrol = tmp_path / "bin" / "scontrol"
    scontrol.write_text('#!/bin/bash\n[ "$2" = hostnames ] && echo localhost && exit 0\nexit 1\n')
    scontrol.chmod(0o755)
    run_dir = tmp_path / "runs/node/n"
    run_dir.mkdir(parents=True)
    return run_dir


def test_a_failing_rank_stops_the_others_and_the_supervisor_names_it(tmp_path):
    from sweepgen.run.core.base import RunState, read_status

    run_dir = stand_in_scontrol(tmp_path)
    shape = RunShape(nodes=1, procs_per_node=2, launcher="srun")
    supervisor = start_participant(tmp_path, 0, shape, "rank1 fails")
    other = start_participant(tmp_path, 1, shape, "rank1 fails")
    assert other.wait(timeout=120) == 4  # its share's exit code, as Slurm records it
    # rank 0 would sleep ten minutes: the note of rank 1 stops it, and the status names rank 1
    assert supervisor.wait(timeout=120) != 0
    status = read_status(run_dir)
    assert status.state is RunState.FAILED
    assert status.reason.startswith("rank1 (on ") and "exited 4" in status.reason, status.reason
    assert "see run.rank1.log" in status.reason
    assert "rank 1 of 2 meets at localhost:20077" in (run_dir / "run.rank1.log").read_text()
    assert "rank 0 of 2" in (run_dir / "run.log").read_text()
    assert status.attempt == 1 and status.ids["slurm_job"] == "77"
    rank0 = int((run_dir / "rank0.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(rank0, 0)  # stopped, not left behind


def test_two_nodes_participants_start_the_run_once_and_hold_no_submission_lock_while_it_runs(tmp_path):
    """Each participant of a two-node run checks the jobs journal under the sweep's submission lock
    before its rank starts: it takes the lock only for that look, so the other node's participant
    (and a `sweepgen run` submitting meanwhile) never waits on it for the run's length; each rank
    starts once."""
    import fcntl

    from sweepgen.run.core.base import RunState, read_status

    run_dir = stand_in_scontrol(tmp_path)
    shape = RunShape(nodes=2, procs_per_node=1, launcher="srun")
    parts = [start_participant(tmp_path, procid, shape, "until go") for procid in (0, 1)]
    deadline = time.monotonic() + 120
    while not all((run_dir / f"starts.rank{r}").exists() for r in (0, 1)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in parts), "a rank never started"
        time.sleep(0.05)
    # both ranks running: nobody holds the submission lock (a blocking hold would fail here)
    with open(tmp_path / "runs/node/.sweepgen_slurm/submit.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    (run_dir / "go").touch()
    assert [p.wait(timeout=120) for p in parts] == [0, 0]
    assert [(run_dir / f"starts.rank{r}").read_text() for r in (0, 1)] == ["start\n", "start\n"]
    status = read_status(run_dir)
    assert status.state is RunState.FINISHED and status.attempt == 1, status


def test_a_supervisor_that_declines_stops_a_participant_that_started_its_share(tmp_path):
    """Each participant checks for itself whether the job may start the run; where the supervisor
    declines (here: its task names no journal folder) and another participant started its rank,
    that rank is stopped after the grace and exits 0 (before: it waited for the supervisor's ranks
    until the job's time limit)."""
    run_dir = stand_in_scontrol(tmp_path)
    shape = RunShape(nodes=2, procs_per_node=1, launcher="srun")
    other = start_participant(tmp_path, 1, shape, "until go", end_grace_s=1.0)
    deadline = time.monotonic() + 120
    while not (run_dir / "starts.rank1").exists():
        assert time.monotonic() < deadline and other.poll() is None, "rank 1 never started"
        time.sleep(0.05)
    supervisor = start_participant(tmp_path, 0, shape, "until go", journal=False)
    assert supervisor.wait(timeout=120) == 0
    try:
        assert other.wait(timeout=120) == 0  # stopped after the grace, never told "go"
    finally:
        (run_dir / "go").touch()  # (a rank left running, before, ends with the test)
        other.wait(timeout=60)
    assert not (run_dir / "starts.rank0").exists()


def wait_started(run_dir: Path, rank: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not (run_dir / f"starts.rank{rank}").exists():
        assert time.monotonic() < deadline and proc.poll() is None, f"rank {rank} never started"
        time.sleep(0.05)


@pytest.mark.parametrize("mode", ["until go", "until go, 0 on a stop"])
def test_a_participant_that_declines_stops_the_supervisors_run_at_once_and_the_status_says_why(
    tmp_path, mode
):
    """The supervisor's own look said yes and its rank runs; rank 1's look declines (here: its task
    names no journal folder). Its decline note stops the supervisor's rank at once (before: it
    waited for rank 1 until the job's time limit; here, for "go", which never comes), and the
    status says which participant declined and why. A trainer that exits 0 on the stop (saved its
    checkpoint) leaves no exit code beside the failure (before: failed, exit code 0)."""
    from sweepgen.run.core.base import RunState, read_status

    run_dir = stand_in_scontrol(tmp_path)
    shape = RunShape(nodes=2, procs_per_node=1, launcher="srun")
    supervisor = start_participant(tmp_path, 0, shape, mode)
    try:
        wait_started(run_dir, 0, supervisor)
        other = start_participant(tmp_path, 1, shape, mode, journal=False)
        assert other.wait(timeout=120) == 0  # it declined: no failure of its own
        assert supervisor.wait(timeout=60) != 0  # stopped at once, not after a grace
    finally:
        (run_dir / "go").touch()  # (a rank left running, before, ends with the test)
        supervisor.wait(timeout=60)
    assert not (run_dir / "starts.rank1").exists()
    status = read_status(run_dir)
    assert status.state is RunState.FAILED, status
    assert status.reason.startswith("node1 (on ") and "declined to start its share" in status.reason
    assert "no Slurm jobs journal folder" in status.reason, status.reason
    assert status.exit_code != 0, status  # None for the trainer that exited 0: no success's code


def test_a_supervisor_that_finds_the_runs_lock_held_stops_the_participants_at_once(tmp_path):
    """The run's lock is held by another process running the run: the supervisor exits 3 without
    starting anything, and its decline note stops the participant that started its share at once
    (before: it left no note, and that share waited for rank 0 until the job's time limit); the
    note says why, for `status` (the Slurm-cluster test reads it there)."""
    from sweepgen.run.core import runlock
    from sweepgen.run.slurm import ranks

    run_dir = stand_in_scontrol(tmp_path)
    shape = RunShape(nodes=2, procs_per_node=1, launcher="srun")
    held = runlock.acquire(run_dir)
    assert held is not None
    other = start_participant(tmp_path, 1, shape, "until go")
    try:
        wait_started(run_dir, 1, other)
        supervisor = start_participant(tmp_path, 0, shape, "until go")
        assert supervisor.wait(timeout=120) == 3
        assert other.wait(timeout=60) == 0  # stopped at once, never told "go"
    finally:
        (run_dir / "go").touch()
        other.wait(timeout=60)
        os.close(held)
    assert not (run_dir / "starts.rank0").exists()
    note = ranks.declined(run_dir, "77")
    assert note is not None and note.label == "rank0" and note.exit_code == 3
    assert "locked by another process" in note.why


# the grace rank 1 is given here: shorter than the product's, longer than the watch interval and a
# stop on a loaded machine take together (a stop without the grace ends it ~1 s after the note)
END_GRACE_S = 8.0


def test_a_rank_left_waiting_after_rank_0_ended_cleanly_is_stopped_after_the_grace(tmp_path):
    from sweepgen.run.core.base import RunState, read_status
    from sweepgen.run.slurm import ranks

    run_dir = stand_in_scontrol(tmp_path)
    shape = RunShape(nodes=1, procs_per_node=2, launcher="srun")
    supervisor = start_participant(tmp_path, 0, shape, "rank0 ends")
    other = start_participant(tmp_path, 1, shape, "rank0 ends", end_grace_s=END_GRACE_S)
    assert supervisor.wait(timeout=120) == 0
    assert read_status(run_dir).state is RunState.FINISHED
    # rank 1 would sleep ten minutes (a Ray worker's `ray start --block`): it is stopped after the
    # grace, and exits 0 as the run did, so Slurm does not call the job FAILED
    assert other.wait(timeout=END_GRACE_S + 90) == 0
    # it was given the grace first: counted from the supervisor's note, which it saw no earlier
    (note,) = (run_dir / ranks.NOTES_DIR).glob("*.rank0.json")  # srun: the supervisor is rank 0
    assert time.time() - note.stat().st_mtime >= END_GRACE_S
    rank1 = int((run_dir / "rank1.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(rank1, 0)
    assert read_status(run_dir).state is RunState.FINISHED  # the participant never wrote it


def test_what_a_rank_leaves_in_a_session_of_its_own_is_ended_with_it(tmp_path):
    from sweepgen.run.core.base import RunState, read_status

    run_dir = stand_in_scontrol(tmp_path)
    shape = RunShape(nodes=1, procs_per_node=2, launcher="srun")
    supervisor = start_participant(tmp_path, 0, shape, "orphan")
    other = start_participant(tmp_path, 1, shape, "orphan")
    assert other.wait(timeout=120) == 0 and supervisor.wait(timeout=120) == 0
    assert read_status(run_dir).state is RunState.FINISHED
    orphan = int((run_dir / "orphan.pid").read_text())
    # reparented to rank 1's participant (a subreaper), which killed and reaped it before exiting
    with pytest.raises(ProcessLookupError):
        os.kill(orphan, 0)


def test_a_participant_note_is_read_as_data_a_link_or_fifo_is_not_a_note(tmp_path: Path):
    from sweepgen.run.slurm import ranks

    ranks.write_note(tmp_path, "7.0", "node1", 3)
    folder = tmp_path / ranks.NOTES_DIR
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"label": "node2", "exit_code": 9, "host": "h"}))
    (folder / "7.0.node2.json").symlink_to(outside)  # never followed
    os.mkfifo(folder / "7.0.node3.json")  # would block a plain read forever
    found = ranks.notes(tmp_path, "7.0", besides="node0")
    assert [(n.label, n.exit_code) for n in found] == [("node1", 3)]
