"""Two local `sweepgen run`s of one sweep, side by side, each with ``--gpus 0,1 --per-gpu 1``: each
counts the other's runs on its GPUs (run/local/gpu_share.py), so together they never put two runs on
one GPU. Before, each counted only its own, and both packed their runs on GPUs 0 and 1.

The trainer proves it by itself: it claims ``gpu-<CUDA_VISIBLE_DEVICES>.busy`` with O_EXCL while it
works, and notes every claim it found taken."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from run_support import make_sweep
from search_support import sweepgen

from sweepgen.fs.filenames import GPU_LOCK as LOCK
from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, read_status
from sweepgen.run.local import gpu_share

TRAINER = """\
import os, sys, time
root = sys.argv[3]
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "starts.txt"), "a") as fh:
    fh.write(f"{os.getpid()}\\n")
claim = os.path.join(root, "gpu-" + os.environ["CUDA_VISIBLE_DEVICES"] + ".busy")
try:
    os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
except FileExistsError:
    with open(os.path.join(root, "overpacked.txt"), "a") as fh:
        fh.write(f"{out} on GPU {os.environ['CUDA_VISIBLE_DEVICES']}\\n")
    claim = None
time.sleep(1.5)
if claim:
    os.unlink(claim)
"""


def test_two_sweepgen_runs_with_the_same_gpus_never_put_two_runs_on_one_gpu(tmp_path: Path) -> None:
    names = [f"r{i}" for i in range(4)]
    make_sweep(tmp_path, {n: {} for n in names})
    script = tmp_path / "trainer.py"
    script.write_text(TRAINER)
    trainer = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    command = f"{trainer} {{run_dir}} {{config}} {shlex.quote(str(tmp_path))}"
    args = ("run", "generated/fake", "--gpus", "0,1", "--per-gpu", "1", "--command", command)
    both = [sweepgen(tmp_path, *args, wait=False) for _ in range(2)]
    ended = [proc.communicate(timeout=180) for proc in both]
    for proc, (out, err) in zip(both, ended, strict=True):
        assert proc.returncode == 0 and "Traceback" not in err, out + err
    overpacked = tmp_path / "overpacked.txt"
    assert not overpacked.exists(), overpacked.read_text()
    for name in names:
        run = tmp_path / "runs" / "fake" / name
        assert len((run / "starts.txt").read_text().splitlines()) == 1, name  # each started once
        status = read_status(run)
        assert status is not None and status.state is RunState.FINISHED, status


def test_sweepgen_runs_of_two_sweeps_of_a_project_count_each_others_runs(tmp_path: Path) -> None:
    """Their run folders are apart (runs/a, runs/b): each finds the other's live runs through the
    supervisors running them (/proc), so with `--gpus 0` they run one at a time. Before, each
    counted its own only."""
    for sweep in ("a", "b"):
        make_sweep(tmp_path, {f"{sweep}{i}": {} for i in range(2)}, sweep=sweep)
    script = tmp_path / "trainer.py"
    script.write_text(TRAINER)
    trainer = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    command = f"{trainer} {{run_dir}} {{config}} {shlex.quote(str(tmp_path))}"
    # started at the same instant: they take turns under runs/.sweepgen-gpus.lock
    both = [
        sweepgen(tmp_path, "run", f"generated/{s}", "--gpus", "0", "--command", command, wait=False)
        for s in "ab"
    ]
    for proc in both:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0 and "Traceback" not in err, out + err
    overpacked = tmp_path / "overpacked.txt"
    assert not overpacked.exists(), overpacked.read_text()


def test_the_gpu_lock_of_a_sweep_is_taken_with_its_projects_runs_root(tmp_path: Path, monkeypatch) -> None:
    """Two sweeps' `sweepgen run`s starting in the same instant each counted the other's runs before
    those were started, and both took the one free slot: the lock was per runs folder. Now the
    folder above them (``runs/``, inside the project) has one, held first, so they take turns; a
    folder outside the project gets none."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    runs = Path("runs")
    (runs / "a").mkdir(parents=True)
    with gpu_share.held({runs / "a"}):
        for folder in (runs, runs / "a"):
            assert _locked(folder / LOCK), folder
    assert not _locked(runs / LOCK)
    outside = tmp_path / "shared"
    (outside / "b").mkdir(parents=True)
    with gpu_share.held({outside / "b", runs / "a"}):
        assert _locked(outside / "b" / LOCK) and _locked(runs / LOCK)
    assert not (outside / LOCK).exists() and not (project / LOCK).exists()
    assert gpu_share._lock_order([runs / "a", Path("runs/./a"), runs]) == [runs, runs / "a"]


def _locked(path: Path) -> bool:
    """Whether another open file of ``path`` holds its flock."""
    return runlock.held_elsewhere(os.open(path, os.O_RDONLY))
