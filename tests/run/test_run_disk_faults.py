"""A full disk under sweepgen's own records: the error names the path, the runs already
started are followed to their end, nothing else starts, exit 2, no traceback.

The run directories live on a real 1 MiB tmpfs that the test fills while two runs are going, so the
kernel itself answers ENOSPC (needs root to mount; skipped otherwise).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, LOADED_S, WAITER, fill_disk, make_sweep, output_of, start_written
from slurm_support import journal_ids

import sweepgen
from sweepgen.run.core.base import STATUS_FILE

PACKAGE_DIR = str(Path(sweepgen.__file__).resolve().parent) + os.sep  # where sweepgen's own frames live


def _mount_tmpfs(where: Path) -> None:
    where.mkdir(parents=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_disk_under_the_status_files_is_exit_2_with_the_path(tmp_path):
    runs = tmp_path / "runs"
    _mount_tmpfs(runs)
    try:
        make_sweep(
            tmp_path,
            {"a": {"steps": 40, "sleep": 0.1}, "b": {"steps": 40, "sleep": 0.1}, "c": {"steps": 2}},
        )
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sweepgen",
                "run",
                "generated/fake",
                "--jobs",
                "2",
                "--command",
                FAKE_COMMAND,
            ],
            cwd=tmp_path,
            env={**os.environ, "COLUMNS": "200", "OMP_NUM_THREADS": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        started = [runs / "fake" / n / "metrics.jsonl" for n in ("a", "b")]
        while not all(p.exists() for p in started):
            assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
            time.sleep(0.05)
        fill_disk(runs)  # every write from now on is ENOSPC: the trainers' and sweepgen's
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, out + err
        # no frame of sweepgen's own code (the runs' tracebacks may be shown); by the package's folder,
        # never a bare "sweepgen/", which the clone's own path may hold
        assert PACKAGE_DIR not in err and "internal error" not in err
        assert "No space left on device" in err
        # the run folder whose disk is full, by its path, said as it is: each run's end was recorded
        # (the room kept for it), none is said unwritten
        said = " ".join(err.split())
        named = {n for n in ("a", "b") if f"error: the disk under runs/fake/{n} is full" in said}
        assert named and not any(f"could not write runs/fake/{n}/{STATUS_FILE}" in said for n in named), err
        assert not (runs / "fake" / "c").exists()  # nothing else was started on the full disk
        for name in ("a", "b"):  # both runs were followed to their end: neither is left running
            pid = json.loads((runs / "fake" / name / "starts.jsonl").read_text().splitlines()[0])["pid"]
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
            # and their ends are recorded, over the room kept for them (before: "running" for ever)
            status = json.loads((runs / "fake" / name / STATUS_FILE).read_text())
            assert status["state"] in ("failed", "finished") and status["ended"], status
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)


def _mount_read_only(where: Path) -> None:
    """``where`` (a folder) made read-only by a read-only bind mount of itself."""
    for argv in (["mount", "--bind", str(where), str(where)], ["mount", "-o", "remount,bind,ro", str(where)]):
        proc = subprocess.run(argv, capture_output=True)
        if proc.returncode != 0:
            subprocess.run(["umount", "-l", str(where)], check=False)
            pytest.skip(f"cannot bind-mount read-only here: {proc.stderr.decode().strip()}")


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
# with --gpus the GPU lock above the run folders (run/local/gpu_share.py) is the first write
@pytest.mark.parametrize("extra", [(), ("--gpus", "0")], ids=["plain", "gpus"])
def test_a_read_only_runs_folder_stops_at_the_first_run_like_a_full_disk(tmp_path, extra):
    make_sweep(tmp_path, {n: {"steps": 1} for n in ("a", "b", "c")})
    runs = tmp_path / "runs"
    runs.mkdir()
    _mount_read_only(runs)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sweepgen", "run", "generated/fake", "--command", FAKE_COMMAND, *extra],
            cwd=tmp_path,
            env={**os.environ, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Read-only file system" in done.stderr and "Traceback" not in done.stderr
    # the file it could not write named, as a fault of this invocation (not an error that stops runs)
    # (with --gpus: the project's GPU lock, runs/.sweepgen-gpus.lock, held before the sweep's)
    written = "runs/.sweepgen-gpus.lock" if extra else "runs/fake"
    assert f"error: could not write {written}" in done.stderr and "stopping the runs" not in done.stderr
    # one fault, said once; no run is "failed" nor "still running elsewhere": none was started
    assert done.stderr.count("Read-only file system") == 1, done.stderr
    assert "still running elsewhere" not in done.stdout + done.stderr
    assert "failed" not in done.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_a_read_only_sweep_folder_is_exit_2_with_a_hint_run_can_follow(tmp_path):
    sweep = make_sweep(tmp_path, {"a": {"steps": 1}})
    _mount_read_only(sweep)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sweepgen", "run", "generated/fake", "--command", FAKE_COMMAND],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        subprocess.run(["umount", "-l", str(sweep)], check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert ".sweepgen-run.json" in done.stderr and "Read-only file system" in done.stderr
    assert "-o DIR" not in done.stderr and "make the folder writable" in done.stderr
    assert not (tmp_path / "runs").exists()


def _held_run(root: Path, release: Path) -> subprocess.Popen[str]:
    """`sweepgen run` of one run ``a`` whose trainer has started and waits for ``release``."""
    make_sweep(root, {"a": {"release": str(release)}})
    (root / "waiter.py").write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(root / 'waiter.py'))} {{config}}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", "run", "generated/fake", "--command", command],
        cwd=root,
        env={**os.environ, "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + LOADED_S
    while not start_written(root / "runs" / "fake" / "a" / "starts.txt"):
        assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
        time.sleep(0.05)
    return proc


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_run_that_finishes_after_the_disk_filled_up_is_recorded_finished(tmp_path):
    """The disk fills up while the run trains (a neighbour's checkpoints); the trainer then exits 0.
    Its end is recorded in the room its supervisor kept for it: `status` says finished (before: the
    status file kept "running", shown lost, and `--rerun-failed` ran it again); `run` says the disk
    is full (exit 2)."""
    runs = tmp_path / "runs"
    _mount_tmpfs(runs)
    try:
        release = tmp_path / "release"
        proc = _held_run(tmp_path, release)
        run = runs / "fake" / "a"
        fill_disk(runs)
        release.touch()
        out, err = proc.communicate(timeout=LOADED_S)
        status = json.loads((run / STATUS_FILE).read_text())
        starts = (run / "starts.txt").read_text().splitlines()
        shown = subprocess.run(
            [sys.executable, "-m", "sweepgen", "status", "generated/fake", "--format", "json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=LOADED_S,
        )
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)
    # the fault is said (exit 2: nothing more may start on that disk), the run is finished
    assert proc.returncode == 2 and "Traceback" not in err and "No space left on device" in err, out + err
    assert "a: finished" in out and "a: failed" not in out, out
    assert status["state"] == "finished" and status["exit_code"] == 0 and status["ended"], status
    assert [row["state"] for row in json.loads(shown.stdout)] == ["FINISHED"], shown.stdout + shown.stderr
    assert len(starts) == 1
    # the record that was kept is not said unwritten (before: "could not write .../a/sweepgen_status.json")
    said = " ".join(err.split())
    assert f"could not write runs/fake/a/{STATUS_FILE}" not in said, err
    full = "error: the disk under runs/fake/a is full (No space left on device): the run's end was recorded"
    assert full in said, err


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_a_run_that_finished_where_its_end_cannot_be_written_is_said_finished_not_failed(tmp_path):
    """The run folder turns read-only while the run trains; the trainer then exits 0 (no done file:
    exit 0 is its proof). Its supervisor cannot record that end: `run` exits 2 for the fault, and
    says the run finished (before: "failed", which `--rerun-failed` would take to start it again)."""
    release = tmp_path / "release"
    proc = _held_run(tmp_path, release)
    run = tmp_path / "runs" / "fake" / "a"
    _mount_read_only(run)
    try:
        release.touch()
        out, err = proc.communicate(timeout=LOADED_S)
    finally:
        subprocess.run(["umount", "-l", str(run)], check=False)
    assert proc.returncode == 2 and "Read-only file system" in err and "Traceback" not in err, out + err
    assert "a: finished" in out and "a: failed" not in out, out + err
    assert "the run ended finished (exit code 0); that could not be recorded" in (run / "run.log").read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_slurm_run_that_finishes_after_the_disk_filled_up_is_recorded_finished(tmp_path):
    """The same on a Slurm node: the node task's end goes over the room it kept (before: writing it
    raised, the job failed, and the finished run was recorded FAILED by Slurm's word, which
    `--rerun-failed` would run a second time)."""
    import pickle

    from sweepgen.run.core.base import RunState, RunStatus, read_status
    from sweepgen.run.slurm.task import NodeTask

    runs = tmp_path / "runs"
    _mount_tmpfs(runs)
    try:
        release = tmp_path / "release"
        folder = make_sweep(tmp_path, {"n": {"release": str(release)}}, sweep="node")
        (tmp_path / "waiter.py").write_text(WAITER)
        argv = (sys.executable, str(tmp_path / "waiter.py"), str(folder / "n.yaml"))
        ids = journal_ids(runs / "node", "n", "40_1")  # the job below
        status = RunStatus(RunState.RUNNING, "slurm", ids=ids, done_file=None)
        node = NodeTask(name="n", argv=argv, cwd=str(tmp_path), run_dir="runs/node/n", status=status)
        (tmp_path / "node.pkl").write_bytes(pickle.dumps(node))
        code = (
            "import pickle; from sweepgen.run.slurm.task import run_on_node; "
            f"print(run_on_node(pickle.loads(open({str(tmp_path / 'node.pkl')!r}, 'rb').read())))"
        )
        env = {**os.environ, "SLURM_JOB_ID": "41", "SLURM_ARRAY_JOB_ID": "40", "SLURM_ARRAY_TASK_ID": "1"}
        proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        run = runs / "node" / "n"
        deadline = time.monotonic() + LOADED_S
        while not start_written(run / "starts.txt"):
            assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
            time.sleep(0.05)
        fill_disk(runs)
        release.touch()
        out, _ = proc.communicate(timeout=LOADED_S)
        recorded = read_status(run)
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)
    assert proc.returncode == 0 and out.strip().endswith("finished"), out
    assert recorded is not None and recorded.state is RunState.FINISHED and recorded.exit_code == 0, recorded
