"""Two local `sweepgen run`s of one sweep, side by side, each with ``--gpus 0,1 --per-gpu 1``: each
counts the other's runs on its GPUs (run/local/gpu_share.py), so together they never put two runs on
one GPU. Before, each counted only its own, and both packed their runs on GPUs 0 and 1.

The trainer proves it by itself: it claims ``gpu-<CUDA_VISIBLE_DEVICES>.busy`` with O_EXCL while it
works, and notes every claim it found taken."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

from run_support import LOADED_S, make_sweep, output_of
from search_support import sweepgen

from sweepgen.run.core.base import RunState, RunStatus, read_status

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
    first = sweepgen(tmp_path, "run", "generated/a", "--gpus", "0", "--command", command, wait=False)
    # the second starts once the first's run names its GPU (the GPU lock is per runs folder)
    deadline = time.monotonic() + LOADED_S
    while not any((s := _state(tmp_path / "runs" / "a" / n)) and "gpu" in s.ids for n in ("a0", "a1")):
        assert time.monotonic() < deadline and first.poll() is None, output_of(first)
        time.sleep(0.02)
    second = sweepgen(tmp_path, "run", "generated/b", "--gpus", "0", "--command", command, wait=False)
    for proc in (first, second):
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0 and "Traceback" not in err, out + err
    overpacked = tmp_path / "overpacked.txt"
    assert not overpacked.exists(), overpacked.read_text()


def _state(run: Path) -> RunStatus | None:
    return read_status(run) if (run / "sweepgen_status.json").exists() else None
