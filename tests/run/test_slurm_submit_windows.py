"""On the real Slurm (tests/slurm_cluster.py): `sweepgen run --executor slurm` SIGKILLed at each
window of a submission, then `run` again, `status`, `cancel`: every run is started exactly once, and
no job is left behind that nobody knows of.

The windows, each reached by a wrapper earlier on PATH that does the real thing and then SIGKILLs
the `sweepgen run` that called it (its parent), so the kill lands exactly there:

- sbatch has queued the (held) array, sweepgen has recorded nothing: the job ids are nowhere;
- submitit has put each job's pickle in place, sweepgen has recorded nothing (no tool runs there:
  the recording itself is replaced by a SIGKILL), and a person releases the array by hand;
- the ids are recorded (status files, jobs journal), the array not released yet;
- the array released, the jobs running (`run --wait` killed while it follows them: as squeue says
  RUNNING), and as they end (as sacct says they ended, before it recorded anything from that).

Starts are counted by the fake trainer's starts.jsonl (a start never recorded is seen).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, LOADED_S, make_sweep
from slurm_support import cli, start_requeued_now, status_json, wait_until

from sweepgen.run.core.base import read_status
from sweepgen.run.slurm import executor as slurm_executor
from sweepgen.run.slurm import journal as slurm_journal
from sweepgen.run.slurm import query as slurm_query

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.usefixtures("slurm_cluster")]

RUNS = {"a": {"steps": 2, "sleep": 0.1}, "b": {"steps": 2, "sleep": 0.1}}


@pytest.fixture
def cwd(cli_cwd):
    return cli_cwd


def _add_resources(folder: Path, **resources) -> None:
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"] = resources
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


def _journal(sweep_root: Path) -> list[dict]:
    path = sweep_root / ".sweepgen_slurm" / "jobs.json"
    return json.loads(path.read_text())["arrays"] if path.exists() else []


def _journal_file(sweep_root: Path) -> dict:
    return json.loads((sweep_root / ".sweepgen_slurm" / "jobs.json").read_text())


def _starts(run_dir: Path) -> int:
    path = run_dir / "starts.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _killing_wrapper(tmp: Path, tool: str, when: str) -> dict[str, str]:
    """PATH with a ``tool`` that, for a call whose first argument is ``when`` (``*``: any call but
    sbatch's --test-only), SIGKILLs its caller (the `sweepgen run`) before (``release``) or after
    (``sbatch``) doing the real thing."""
    bindir = tmp / f"kill-at-{tool}"
    bindir.mkdir()
    real = subprocess.run(["bash", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
    if tool == "sbatch":
        body = (
            'for a in "$@"; do [ "$a" = --test-only ] && exec ' + real + ' "$@"; done\n'
            f'out=$({real} "$@"); rc=$?; echo "$out"\n'
            'kill -9 "$PPID"; exit $rc\n'
        )
    else:
        body = f'[ "$1" = {when} ] && kill -9 "$PPID" && exit 1\nexec {real} "$@"\n'
    (bindir / tool).write_text("#!/bin/bash\n" + body)
    (bindir / tool).chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}


def _run_killed(cwd: Path, env: dict[str, str], sweep: str, *extra: str) -> None:
    argv = [sys.executable, "-m", "sweepgen", "run", f"generated/{sweep}", "--executor", "slurm"]
    proc = subprocess.run(
        [*argv, "--command", FAKE_COMMAND, *extra],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == -9, proc.stdout + proc.stderr  # killed in the window, as meant


def _ours_in_queue(sweep: str) -> dict[str, slurm_query.JobInfo]:
    """Every live job named as sweepgen names this sweep's jobs, by squeue's name filter."""
    out = subprocess.run(
        ["squeue", "-h", "-r", "-o", "%i|%T|%j|%r|%u|%Z", "--name", f"sweepgen-{sweep}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    return {j: info for j, info in slurm_query.parse_squeue(out).items() if not info.ended}


def _gone_from_queue(sweep: str) -> None:
    deadline = time.monotonic() + LOADED_S
    while _ours_in_queue(sweep):
        assert time.monotonic() < deadline, _ours_in_queue(sweep)
        time.sleep(0.5)


def _finished_once(cwd: Path, sweep: str) -> None:
    rows = wait_until(
        f"generated/{sweep}", lambda r: all(x["state"] == "FINISHED" for x in r.values()), LOADED_S, "all"
    )
    for name in RUNS:
        assert _starts(cwd / "runs" / sweep / name) == 1, (name, rows)
        assert rows[name]["attempt"] == 1, rows


def _sweep(cwd: Path, sweep: str) -> None:
    make_sweep(cwd, RUNS, sweep=sweep)
    _add_resources(cwd / "generated" / sweep, time=5)


def test_killed_as_sbatch_returns_the_next_run_cancels_the_lost_held_array_and_runs_each_once(cwd, tmp_path):
    _sweep(cwd, "w1")
    _run_killed(cwd, _killing_wrapper(tmp_path, "sbatch", "*"), "w1")
    lost = _ours_in_queue("w1")
    assert lost and all(j.reason == "JobHeldUser" for j in lost.values()), lost  # queued, held, unrecorded
    assert _journal(cwd / "runs/w1") == []
    assert {r["state"] for r in status_json("generated/w1").values()} == {"NOT STARTED"}
    again = cli("run", "generated/w1", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert again.exit_code == 0, again.output
    # the held array nobody recorded is found by its name, user and folder, and cancelled: a
    # `scontrol release` of it later can never start a run a second time
    assert "died before recording it" in again.output, again.output
    assert not set(lost) & set(_ours_in_queue("w1")), _ours_in_queue("w1")
    assert len(_journal(cwd / "runs/w1")) == 1
    # the killed run's tasks file (its array never recorded, now cancelled) is gone; the new one's stays
    slurm_dir = cwd / "runs/w1/.sweepgen_slurm"
    assert list(slurm_dir.glob("tasks-*.json")) == [slurm_dir / _journal(cwd / "runs/w1")[0]["tasks_file"]]
    _finished_once(cwd, "w1")


def test_killed_before_recording_an_array_released_by_hand_starts_nothing_and_the_next_run_each_once(
    cwd, tmp_path
):
    """The held array nobody recorded, released by hand (`scontrol release`) before any `run` or
    `cancel` settled it: its jobs find no journal entry naming them and start nothing, each saying
    why in its log (before: the runs, with no status file yet, started here and again from the next
    `run`'s own submission)."""
    _sweep(cwd, "w1r")
    # killed as the recording begins: sbatch has queued the array and submitit has put each job's
    # pickle in place (so a released job runs the node task), the journal names nothing
    killed_at_record = (
        "import os, signal, sys; from sweepgen.run.slurm.executor import SlurmExecutor; "
        "SlurmExecutor._record = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL); "
        "from sweepgen.cli import main; main(sys.argv[1:], prog_name='sweepgen')"
    )
    argv = ["run", "generated/w1r", "--executor", "slurm", "--command", FAKE_COMMAND]
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-c", killed_at_record, *argv], cwd=cwd, env=env, capture_output=True, timeout=180
    )
    assert proc.returncode == -9, proc.stdout + proc.stderr
    assert _journal(cwd / "runs/w1r") == []
    lost = _ours_in_queue("w1r")
    (array,) = {j.split("_", 1)[0] for j in lost}
    done = subprocess.run(["scontrol", "release", array], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    _gone_from_queue("w1r")
    assert not any(_starts(cwd / "runs/w1r" / n) for n in RUNS)
    said = "".join(p.read_text() for p in (cwd / "runs/w1r/.sweepgen_slurm").glob(f"{array}_*/*_log.err"))
    assert said.count("is not named in the Slurm jobs journal") == len(RUNS), said
    assert {r["state"] for r in status_json("generated/w1r").values()} == {"NOT STARTED"}
    again = cli("run", "generated/w1r", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert again.exit_code == 0, again.output
    _finished_once(cwd, "w1r")


def test_killed_as_sbatch_returns_cancel_reaches_the_array_whose_ids_were_never_recorded(cwd, tmp_path):
    _sweep(cwd, "w1c")
    _run_killed(cwd, _killing_wrapper(tmp_path, "sbatch", "*"), "w1c")
    assert _ours_in_queue("w1c")
    cancelled = cli("cancel", "generated/w1c")
    assert cancelled.exit_code == 0 and "Traceback" not in cancelled.output, cancelled.output
    _gone_from_queue("w1c")
    # nothing ran, and nothing says it did: the runs are still to be started
    assert {r["state"] for r in status_json("generated/w1c").values()} == {"NOT STARTED"}
    assert not any(_starts(cwd / "runs/w1c" / n) for n in RUNS)


def test_killed_before_release_the_next_run_releases_the_recorded_array_and_runs_each_once(cwd, tmp_path):
    _sweep(cwd, "w2")
    _run_killed(cwd, _killing_wrapper(tmp_path, "scontrol", "release"), "w2")
    (array,) = _journal(cwd / "runs/w2")
    held = _ours_in_queue("w2")
    assert held and all(j.reason == "JobHeldUser" for j in held.values()), held
    rows = status_json("generated/w2")
    # held, and said why, with what to do
    assert all("`sweepgen run` again releases it" in (r["reason"] or "") for r in rows.values()), [
        r["reason"] for r in rows.values()
    ]
    again = cli("run", "generated/w2", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert again.exit_code in (0, 1), again.output  # 1: "still running elsewhere" (not waited for)
    assert f"released job array {array['array_job_id']}" in again.output, again.output
    assert len(_journal(cwd / "runs/w2")) == 1  # nothing submitted a second time
    _finished_once(cwd, "w2")


def test_killed_before_release_cancel_ends_the_held_array(cwd, tmp_path):
    _sweep(cwd, "w2c")
    _run_killed(cwd, _killing_wrapper(tmp_path, "scontrol", "release"), "w2c")
    cancelled = cli("cancel", "generated/w2c")
    assert cancelled.exit_code == 0, cancelled.output
    _gone_from_queue("w2c")
    assert not any(_starts(cwd / "runs/w2c" / n) for n in RUNS)
    rerun = cli("run", "generated/w2c", "--executor", "slurm", "--command", FAKE_COMMAND, "--rerun-failed")
    assert rerun.exit_code == 0, rerun.output
    rows = wait_until(
        "generated/w2c", lambda r: all(x["state"] == "FINISHED" for x in r.values()), LOADED_S, "all"
    )
    assert all(_starts(cwd / "runs/w2c" / n) == 1 for n in RUNS), rows


def _wait_queue(job_id: str, until, what: str) -> None:
    deadline = time.monotonic() + LOADED_S
    while not until(slurm_query.squeue([job_id]).get(job_id)):
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


def test_an_old_job_requeued_after_the_run_was_submitted_again_never_starts_it(cwd):
    """Job X of a run failed, `--rerun-failed` submitted job Y, which failed too; then Slurm requeues
    X (`scontrol requeue`, what preemption does). X is not the run's latest submission (its status
    file names Y): it starts nothing, and the run keeps Y's attempt and end."""
    make_sweep(cwd, {"q": {"steps": 2, "fail_at": 1}}, sweep="sup")
    _add_resources(cwd / "generated" / "sup", time=5)
    argv = ("run", "generated/sup", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert cli(*argv).exit_code == 0
    first = wait_until("generated/sup", lambda r: r["q"]["state"] == "FAILED", LOADED_S, "q to fail")["q"]
    assert cli(*argv, "--rerun-failed").exit_code == 0
    rows = wait_until(
        "generated/sup", lambda r: r["q"]["state"] == "FAILED" and r["q"]["attempt"] == 2, LOADED_S, "again"
    )
    old, latest = first["job_id"], rows["q"]["job_id"]
    assert old != latest and _starts(cwd / "runs/sup/q") == 2
    _wait_queue(old, lambda job: job is None or job.ended, "the old job never left the queue")
    done = subprocess.run(["scontrol", "requeue", old], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    _wait_queue(
        old, lambda job: job is not None and job.state == "PENDING", "the old job never became PENDING"
    )
    start_requeued_now(old)
    _wait_queue(old, lambda job: job is None or job.ended, "the requeued old job never ended")
    assert _starts(cwd / "runs/sup/q") == 2  # the trainer was not started by the old job
    row = status_json("generated/sup")["q"]
    assert (row["state"], row["attempt"], row["job_id"]) == ("FAILED", 2, latest), row
    said = "".join(p.read_text() for p in (cwd / "runs/sup/.sweepgen_slurm").glob(f"{old}/*_log.err"))
    # the old job's tasks file is there (it says it is not the run's latest job), or, where the
    # rerun's `run` saw the old array gone from Slurm, removed (it says why a requeued job finds none)
    removed = "tasks file is missing" in said and "scontrol requeue" in said
    assert f"not this job {old}" in said or removed, said


def _killed_between_journal_and_status(cwd: Path, tmp_path: Path, sweep: str) -> None:
    """The array recorded in the jobs journal, run a's status file not written yet: killed before
    release, then a's status file taken away (the journal is written first, the status files after)."""
    _sweep(cwd, sweep)
    _run_killed(cwd, _killing_wrapper(tmp_path, "scontrol", "release"), sweep)
    (cwd / "runs" / sweep / "a" / "sweepgen_status.json").unlink()


def test_killed_between_journal_and_status_files_the_next_run_runs_each_once(cwd, tmp_path):
    _killed_between_journal_and_status(cwd, tmp_path, "w3")
    again = cli("run", "generated/w3", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert again.exit_code in (0, 1) and "released job array" in again.output, again.output
    assert len(_journal(cwd / "runs/w3")) == 1  # a's job, released, runs it: not submitted again
    _finished_once(cwd, "w3")


def test_killed_between_journal_and_status_files_cancel_leaves_nothing_to_start_later(cwd, tmp_path):
    _killed_between_journal_and_status(cwd, tmp_path, "w3c")
    cancelled = cli("cancel", "generated/w3c")
    assert cancelled.exit_code == 0, cancelled.output
    _gone_from_queue("w3c")  # a's held job too, though no status file named it
    # so a later `run` releases nothing the user cancelled; it submits the runs afresh
    again = cli("run", "generated/w3c", "--executor", "slurm", "--command", FAKE_COMMAND, "--rerun-failed")
    assert again.exit_code == 0 and "released" not in again.output, again.output
    rows = wait_until(
        "generated/w3c", lambda r: all(x["state"] == "FINISHED" for x in r.values()), LOADED_S, "all"
    )
    assert all(_starts(cwd / "runs/w3c" / n) == 1 for n in RUNS), rows


def _killing_when_seen(tmp: Path, tool: str, pattern: str) -> dict[str, str]:
    """PATH with a ``tool`` that does the real thing and, where its output matches ``pattern``
    (grep -E), prints it and then SIGKILLs its caller (the `sweepgen run` following the jobs)."""
    bindir = tmp / f"kill-at-{tool}-seen"
    bindir.mkdir()
    real = subprocess.run(["bash", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
    body = (
        f'out=$({real} "$@"); rc=$?; echo "$out"\n'
        f'echo "$out" | grep -qE \'{pattern}\' && kill -9 "$PPID"\n'
        "exit $rc\n"
    )
    (bindir / tool).write_text("#!/bin/bash\n" + body)
    (bindir / tool).chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}


def _until_slurm_lets_go(run_dir: Path) -> None:
    """Until squeue no longer holds the run's job alive (as `run` asks it, its cache let go)."""
    status = read_status(run_dir)
    assert status is not None
    deadline = time.monotonic() + LOADED_S
    while True:
        slurm_executor._ALIVE_CACHE.clear()
        if not slurm_executor.SlurmExecutor.is_alive(status):
            return
        assert time.monotonic() < deadline, f"Slurm still holds {run_dir.name}'s job alive"
        time.sleep(0.5)


def _shown(sweep: str, want: dict[str, tuple[str, int]]) -> dict[str, dict]:
    """`status` once every run shows its wanted (state, attempt)."""
    return wait_until(
        f"generated/{sweep}",
        lambda r: {n: (r[n]["state"], r[n]["attempt"]) for n in want} == want,
        LOADED_S,
        str(want),
    )


def test_killed_while_its_jobs_run_then_run_cancel_status_rerun_each_once_the_record_true(cwd, tmp_path):
    """`run --wait` SIGKILLed while it follows its running jobs (squeue has just said RUNNING): a
    plain `run` submits nothing again; `cancel --only c` stops c alone; every end is recorded as it
    was (a finished, b failed, c cancelled), each started once; `--rerun-failed` starts b and c once
    more, never a."""
    hold_a, hold_c = tmp_path / "hold_a", tmp_path / "hold_c"
    hold_a.touch()
    hold_c.touch()
    runs = {
        "a": {"steps": 2, "hold_file": str(hold_a)},
        "b": {"steps": 2, "fail_at": 1},
        "c": {"steps": 2, "hold_file": str(hold_c)},
    }
    make_sweep(cwd, runs, sweep="k1")
    _add_resources(cwd / "generated" / "k1", time=5)
    _run_killed(cwd, _killing_when_seen(tmp_path, "squeue", r"\|RUNNING\|"), "k1", "--wait")
    argv = ("run", "generated/k1", "--executor", "slurm", "--command", FAKE_COMMAND)
    again = cli(*argv)
    assert again.exit_code in (0, 1) and "Traceback" not in again.output, again.output
    assert len(_journal(cwd / "runs/k1")) == 1, again.output  # nothing submitted a second time
    _shown("k1", {"a": ("RUNNING", 1), "c": ("RUNNING", 1)})
    deadline = time.monotonic() + LOADED_S
    while not all(_starts(cwd / "runs/k1" / n) for n in ("a", "c")):  # both trainers training
        assert time.monotonic() < deadline, "the trainers of a and c never started"
        time.sleep(0.5)
    cancelled = cli("cancel", "generated/k1", "--only", "c")
    assert cancelled.exit_code == 0, cancelled.output
    hold_a.unlink()
    _shown("k1", {"a": ("FINISHED", 1), "b": ("FAILED", 1), "c": ("CANCELLED", 1)})
    assert [_starts(cwd / "runs/k1" / n) for n in runs] == [1, 1, 1]
    hold_c.unlink()
    # sacct (what `status` shows) says CANCELLED before squeue lets go of a completing job, whose
    # processes may still run on the node: `run` rightly holds c "running elsewhere" until then
    _until_slurm_lets_go(cwd / "runs/k1" / "c")
    rerun = cli(*argv, "--rerun-failed")
    assert rerun.exit_code == 0, rerun.output
    _shown("k1", {"a": ("FINISHED", 1), "b": ("FAILED", 2), "c": ("FINISHED", 2)})
    assert [_starts(cwd / "runs/k1" / n) for n in runs] == [1, 2, 2]
    # the rerun removed the tasks file of the first array (Slurm held none of its jobs), kept its own
    first, second = _journal(cwd / "runs/k1")
    slurm_dir = cwd / "runs/k1/.sweepgen_slurm"
    assert "tasks_file" not in first and "unrecorded_tasks_files" not in _journal_file(cwd / "runs/k1")
    assert list(slurm_dir.glob("tasks-*.json")) == [slurm_dir / second["tasks_file"]]


def test_killed_as_its_jobs_end_then_status_cancel_run_keep_each_end_once(cwd, tmp_path):
    """`run --wait` SIGKILLed as it learns that its jobs ended (sacct has just said so, before it
    recorded anything from that): `status` shows each end as it was (a finished, b failed), a
    `cancel` changes none of them, and a plain `run` starts nothing again."""
    runs = {"a": {"steps": 2}, "b": {"steps": 2, "fail_at": 1}}
    make_sweep(cwd, runs, sweep="k2")
    _add_resources(cwd / "generated" / "k2", time=5)
    _run_killed(cwd, _killing_when_seen(tmp_path, "sacct", r"\|(COMPLETED|FAILED)\|"), "k2", "--wait")
    _shown("k2", {"a": ("FINISHED", 1), "b": ("FAILED", 1)})
    cancelled = cli("cancel", "generated/k2")
    assert cancelled.exit_code == 0 and "Traceback" not in cancelled.output, cancelled.output
    again = cli("run", "generated/k2", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert again.exit_code == 1 and "--rerun-failed" in again.output, again.output  # b failed before
    assert len(_journal(cwd / "runs/k2")) == 1
    rows = _shown("k2", {"a": ("FINISHED", 1), "b": ("FAILED", 1)})
    assert [_starts(cwd / "runs/k2" / n) for n in runs] == [1, 1], rows


def test_cancel_killed_as_scancel_returns_leaves_each_run_cancelled_once_and_rerun_once(cwd, tmp_path):
    """`sweepgen cancel` SIGKILLed the moment scancel returned (before it waited for the jobs or
    recorded anything): the jobs end cancelled all the same, `status` says so, a plain `run`
    starts nothing, and `--rerun-failed` starts each run once more."""
    hold = tmp_path / "hold"
    hold.touch()
    runs = {"a": {"steps": 2, "hold_file": str(hold)}, "b": {"steps": 2, "hold_file": str(hold)}}
    make_sweep(cwd, runs, sweep="kc")
    _add_resources(cwd / "generated" / "kc", time=5)
    argv = ("run", "generated/kc", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert cli(*argv).exit_code == 0
    deadline = time.monotonic() + LOADED_S
    while not all(_starts(cwd / "runs/kc" / n) for n in runs):  # both trainers training
        assert time.monotonic() < deadline, "the trainers never started"
        time.sleep(0.5)
    env = _killing_wrapper(tmp_path, "scancel", "")
    bindir = Path(env["PATH"].split(os.pathsep, 1)[0])
    real = subprocess.run(["bash", "-c", "command -v scancel"], capture_output=True, text=True).stdout.strip()
    (bindir / "scancel").write_text(f'#!/bin/bash\n{real} "$@"; rc=$?\nkill -9 "$PPID"\nexit $rc\n')
    killed = subprocess.run(
        [sys.executable, "-m", "sweepgen", "cancel", "generated/kc"], cwd=cwd, env=env, capture_output=True
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr
    # (the trainers hold until then: a trainer let go now could finish before Slurm's signal lands)
    _shown("kc", {"a": ("CANCELLED", 1), "b": ("CANCELLED", 1)})
    hold.unlink()
    again = cli(*argv)
    assert again.exit_code == 1 and "--rerun-failed" in again.output, again.output
    assert len(_journal(cwd / "runs/kc")) == 1 and [_starts(cwd / "runs/kc" / n) for n in runs] == [1, 1]
    rerun = cli(*argv, "--rerun-failed")
    assert rerun.exit_code == 0, rerun.output
    _shown("kc", {"a": ("FINISHED", 2), "b": ("FINISHED", 2)})
    assert [_starts(cwd / "runs/kc" / n) for n in runs] == [2, 2]


class _Planted:
    """A pickle that runs a command as it is loaded (what a planted job pickle does on the node)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def test_a_job_pickle_planted_before_the_array_starts_is_never_loaded_on_the_node(cwd, tmp_path, monkeypatch):
    """Whoever writes the runs root between the submission and the jobs' start replaces each job's
    `%j_submitted.pkl` (here at `scontrol release`, the last moment before the held array may
    start). Before, submitit's node program unpickled it: the planted code ran on the node as the
    person who ran sweepgen (the canary was made) and the run never started. Now the node runs the
    task from sweepgen's own file, proven by the digest its batch script carries; the pickle is
    never loaded, and each run runs once."""
    import pickle
    import shutil

    _sweep(cwd, "wp")
    canary = tmp_path / "canary"
    plant = tmp_path / "plant.pkl"
    plant.write_bytes(pickle.dumps(_Planted(f"touch {canary}")))
    bindir = tmp_path / "plant-at-release"
    bindir.mkdir()
    real = shutil.which("scontrol")
    root = cwd / "runs" / "wp" / ".sweepgen_slurm"
    (bindir / "scontrol").write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = release ]; then for f in {root}/*/*_submitted.pkl; do cp {plant} "$f"; done; fi\n'
        f'exec {real} "$@"\n'
    )
    (bindir / "scontrol").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    done = cli("run", "generated/wp", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert done.exit_code == 0, done.output
    assert len(list(root.glob("*/*_submitted.pkl"))) == len(RUNS)  # planted, as meant
    ended = {"FINISHED", "FAILED"}
    rows = wait_until("generated/wp", lambda r: {x["state"] for x in r.values()} <= ended, LOADED_S, "ends")
    assert not canary.exists(), rows  # the planted code never ran
    _finished_once(cwd, "wp")


def _stopping_wrapper(tmp: Path) -> dict[str, str]:
    """PATH with an sbatch that queues the (held) array for real, then stops its caller (the
    `sweepgen run`, SIGSTOP: Ctrl-Z, a debugger) before the caller has read the job id."""
    bindir = tmp / "stop-at-sbatch"
    bindir.mkdir()
    real = subprocess.run(["bash", "-c", "command -v sbatch"], capture_output=True, text=True).stdout.strip()
    body = (
        'for a in "$@"; do [ "$a" = --test-only ] && exec ' + real + ' "$@"; done\n'
        f'out=$({real} "$@"); rc=$?; kill -STOP "$PPID"; echo "$out"; exit $rc\n'
    )
    (bindir / "sbatch").write_text("#!/bin/bash\n" + body)
    (bindir / "sbatch").chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}


def _stopped(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


@pytest.mark.parametrize("patient", [True, False])
def test_stopped_as_sbatch_returns_a_cancel_meanwhile_is_heard_and_nothing_runs_twice(
    cwd, tmp_path, monkeypatch, patient
):
    """`run --executor slurm` stopped (SIGSTOP) as sbatch returns, its array queued and held, nothing
    recorded; a `cancel` meanwhile writes its request and waits for the submission lock; the `run`
    goes on (SIGCONT): it reads the request before it releases the array, cancels the held jobs,
    and says the runs were dropped. Before, it released the array and the runs started under the
    waiting cancel. The next `run` runs each once. Not ``patient``: the `cancel` stops waiting
    for the stopped submission and says why, while the `run` is still stopped (before, it waited
    ten minutes without a word, then failed); so does a second `run`, naming the stopped pid."""
    _sweep(cwd, "ws")
    argv = [sys.executable, "-m", "sweepgen", "run", "generated/ws", "--executor", "slurm"]
    env = _stopping_wrapper(tmp_path)
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    proc = subprocess.Popen([*argv, "--command", FAKE_COMMAND], cwd=cwd, env=env, **pipes)
    try:
        deadline = time.monotonic() + LOADED_S
        while not _stopped(proc.pid):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        if not patient:
            monkeypatch.setattr(slurm_executor, "SETTLE_WAIT_S", 0.5)
            early = cli("cancel", "generated/ws")
            said = " ".join(early.output.split())
            assert early.exit_code == 0 and "stopped? SIGSTOP or Ctrl-Z" in said, early.output
            assert f"pid {proc.pid} (" in said and f"`kill -CONT {proc.pid}`" in said, said  # who
            # a second `run` beside it says at once who holds the lock and how to go on, and gives up
            # behind the stopped holder (before: ten minutes of silence, then exit 2 naming nobody)
            monkeypatch.setattr(slurm_journal, "STOPPED_WAIT_S", 0.5, raising=False)
            monkeypatch.setattr(slurm_journal, "NOTICE_AFTER_S", 0.2, raising=False)
            second = cli("run", "generated/ws", "--executor", "slurm", "--command", FAKE_COMMAND)
            said = " ".join(second.output.split())
            assert second.exit_code == 2 and "Traceback" not in said, said
            assert f"held by pid {proc.pid} (" in said and "stopped: SIGSTOP or Ctrl-Z" in said, said
            assert f"`kill -CONT {proc.pid}`" in said and "stays stopped" in said, said
            assert "waiting for this sweep's Slurm submission lock" in said, said  # said before giving up
            assert _stopped(proc.pid)
        else:
            cancel = subprocess.Popen(
                [sys.executable, "-m", "sweepgen", "cancel", "generated/ws"], cwd=cwd, env=env, **pipes
            )
            while not (cwd / "runs/ws/.sweepgen-cancel.json").exists():  # asked; it waits for the lock
                assert time.monotonic() < deadline and cancel.poll() is None, cancel.communicate()
                time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGCONT)
    out, err = proc.communicate(timeout=LOADED_S)
    if patient:
        said, told = cancel.communicate(timeout=LOADED_S)
        assert cancel.returncode == 0 and "Traceback" not in told, said + told
    assert proc.returncode == 1 and "Traceback" not in err, out + err
    assert out.count("cancelled by `sweepgen cancel` while queued") == len(RUNS), out + err
    _gone_from_queue("ws")
    assert not any(_starts(cwd / "runs/ws" / n) for n in RUNS)
    assert {r["state"] for r in status_json("generated/ws").values()} == {"NOT STARTED"}
    again = cli("run", "generated/ws", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert again.exit_code in (0, 1), again.output
    _finished_once(cwd, "ws")
