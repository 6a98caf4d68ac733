"""Helpers of the tests of multi-process runs on the real Slurm (test_slurm_multiproc.py on one
node, test_slurm_two_nodes.py on two): the probe command, the lock's shape, what the ranks left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from run_support import make_sweep
from slurm_support import cli, start_requeued_now, wait_until

from sweepgen.run.logs.progress import ATTEMPT_MARK
from sweepgen.run.slurm import query as slurm_query

PROBE = Path(__file__).resolve().parent / "fixtures" / "ddp_steps_probe.py"
PROBE_COMMAND = f"{sys.executable} {PROBE} {{config}}"
WAIT_S = 240  # torch's import alone takes seconds per rank on a loaded machine


def shape(folder: Path, launcher: str, procs: int = 2, nodes: int = 1) -> None:
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"] = {
        "time": 10,
        "nodes": nodes,
        "gpus_per_node": 0,
        "procs_per_node": procs,
        "launcher": launcher,
    }
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


def starts(run_dir: Path) -> list[dict]:
    path = run_dir / "ranks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def expected_acc(world: int, steps: int) -> int:
    return world * (world + 1) // 2 * steps * (steps + 1) // 2


def processes_naming(text: str) -> list[int]:
    """Live processes whose command line mentions ``text`` (a run's config path)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(pid))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def requeue_and_resume(cwd: Path, sweep: str, launcher: str, *, nodes: int, procs: int = 2) -> None:
    """Requeue a running run of ``nodes`` x ``procs`` processes (what preemption does) and check
    it resumes exactly: the whole run again in the same job, every rank from the same checkpoint,
    the probe's accumulator what an uninterrupted run computes."""
    steps = 40
    world = nodes * procs
    shape(make_sweep(cwd, {"p": {"steps": steps, "sleep": 0.5}}, sweep=sweep), launcher, procs, nodes)
    assert cli("run", f"generated/{sweep}", "--executor", "slurm", "--command", PROBE_COMMAND).exit_code == 0
    run_dir = cwd / "runs" / sweep / "p"
    ckpt = run_dir / "checkpoint.json"

    def stepped(rows):
        return rows["p"]["state"] == "RUNNING" and ckpt.exists() and json.loads(ckpt.read_text())["step"] >= 3

    job_id = wait_until(f"generated/{sweep}", stepped, WAIT_S, "p to checkpoint step 3")["p"]["job_id"]
    first_pids = [r["pid"] for r in starts(run_dir)]
    subprocess.run(["scontrol", "requeue", job_id], check=True, capture_output=True, timeout=30)
    # the old instance ends everywhere (its ranks and launcher), and Slurm holds the job PENDING
    deadline = time.monotonic() + WAIT_S
    while getattr(slurm_query.squeue([job_id]).get(job_id), "state", None) != "PENDING" or any(
        alive(pid) for pid in first_pids
    ):
        assert time.monotonic() < deadline, "the requeued job never became PENDING with its ranks gone"
        time.sleep(0.5)
    stopped_at = json.loads(ckpt.read_text())["step"]
    assert stopped_at < steps
    start_requeued_now(job_id)
    rows = wait_until(
        f"generated/{sweep}", lambda r: r["p"]["state"] == "FINISHED", WAIT_S, "the resumed run"
    )
    assert rows["p"]["job_id"] == job_id and rows["p"]["attempt"] == 2
    ranks = starts(run_dir)
    assert len(ranks) == 2 * world  # each rank started twice: once per instance of the job
    second = [r for r in ranks if r["pid"] not in first_pids]
    assert sorted(r["rank"] for r in second) == list(range(world))
    assert {r["resumed_from"] for r in second} == {stopped_at}  # both ranks from the same checkpoint
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary == {
        "acc": expected_acc(world, steps),
        "world": world,
        "steps": steps,
    }  # exact: no step lost or doubled
    assert (run_dir / "run.log").read_text().count(ATTEMPT_MARK) == 2
