"""A search whose run folders cannot be written (a read-only mount, a full disk) ends: exit 2 naming
the path, as a grid does, with no trial asked after the fault and the trials whose runs never
started left open for the next `run`; before, the controller waited for ever on a run its executor
had left pending ("not started: sweepgen could not write its files").

Real mounts (needs root; skipped otherwise): a read-only bind mount and a 1 MiB tmpfs the test
fills, so the kernel itself answers EROFS / ENOSPC. Real processes: the sweepgen CLI, the fake
search trainer.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from run_support import LOADED_S, fill_disk, output_of
from search_support import RUN_ARGS, cli, logged_steps, study, sweepgen, write_search_project

SWEEP = "generated/fake_search"
BASE = {"x": 0.5, "y": 0.5, "steps": 3, "step_s": 0.01, "seed": 0, "noise": 0.0, "output_dir": None}

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")


def _mount(argv: list[str], where: Path) -> None:
    proc = subprocess.run(argv, capture_output=True)
    if proc.returncode != 0:
        subprocess.run(["umount", "-l", str(where)], check=False)
        pytest.skip(f"cannot mount here: {proc.stderr.decode().strip()}")


def test_a_search_on_a_read_only_runs_folder_is_exit_2_and_its_trial_left_open(tmp_path):
    spec = write_search_project(tmp_path, {"n": 2, "parallel": 1, "sampler": "random"}, base=BASE)
    assert cli(tmp_path, "render", str(spec)).returncode == 0
    runs = tmp_path / "runs"
    runs.mkdir()
    _mount(["mount", "--bind", str(runs), str(runs)], runs)
    try:
        _mount(["mount", "-o", "remount,bind,ro", str(runs)], runs)
        done = sweepgen(tmp_path, "run", SWEEP, *RUN_ARGS, timeout=LOADED_S)
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Read-only file system" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "runs/fake_search/t0000" in done.stderr, done.stderr  # the path it could not write
    # one trial asked, none after the fault; it never ran, so it is not told failed: left open
    (trial,) = study(tmp_path).get_trials()
    assert trial.state.name == "RUNNING", trial
    # the disk writable again, the same command goes on: the open trial is taken over and run
    again = sweepgen(tmp_path, "run", SWEEP, timeout=LOADED_S)
    assert again.returncode == 0, again.stdout + again.stderr
    assert [t.state.name for t in study(tmp_path).get_trials()] == ["COMPLETE", "COMPLETE"]


def test_a_disk_filled_under_a_searchs_runs_is_exit_2_and_nothing_starts_after(tmp_path):
    slow = {**BASE, "steps": 400, "step_s": 0.05}
    spec = write_search_project(tmp_path, {"n": 6, "parallel": 2, "sampler": "random"}, base=slow)
    assert cli(tmp_path, "render", str(spec)).returncode == 0
    runs = tmp_path / "runs"
    runs.mkdir()
    _mount(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(runs)], runs)
    try:
        proc = sweepgen(tmp_path, "run", SWEEP, *RUN_ARGS, wait=False)
        trained = [runs / "fake_search" / name for name in ("t0000", "t0001")]
        deadline = time.monotonic() + LOADED_S
        while not all(logged_steps(run) for run in trained):
            assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
            time.sleep(0.05)
        fill_disk(runs)  # every write from now on is ENOSPC: the trainers' and sweepgen's
        try:
            out, err = proc.communicate(timeout=LOADED_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        started = sorted(p.parent.name for p in (runs / "fake_search").glob("*/starts.jsonl"))
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)
    assert proc.returncode == 2, out + err
    assert "No space left on device" in err and "Traceback" not in err, err
    assert started == ["t0000", "t0001"], started  # nothing started on the full disk
    trials = study(tmp_path).get_trials()
    # the two that ran were followed to their end and told; a trial asked after them never ran
    assert [t.state.name for t in trials[:2]] == ["FAIL", "FAIL"], [t.state for t in trials]
    assert all(t.state.name == "RUNNING" for t in trials[2:]), [t.state for t in trials]


def test_a_full_disk_under_the_study_journal_names_the_journal_not_stdout(tmp_path):
    """The study journal's append on a full disk (a real tmpfs the test fills: the kernel answers
    ENOSPC) raises an error naming the journal. Before, the write to the open file named no file
    and the CLI said "<stdout>: error: cannot write to standard output: No space left on device",
    sending the user to a disk that was fine (seen killing a search's `.search` folder's disk)."""
    import errno

    from sweepgen.run.search import study as search_study

    state = tmp_path / ".search"
    state.mkdir()
    _mount(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(state)], state)
    try:
        backend = search_study.storage(tmp_path)._backend  # type: ignore[attr-defined]
        fill_disk(state)
        with pytest.raises(OSError) as full:
            backend.append_logs([{"op_code": 0, "worker_id": "w", "study_name": "x" * 100_000}])
    finally:
        subprocess.run(["umount", "-l", str(state)], check=False)
    assert full.value.errno == errno.ENOSPC, full.value
    assert full.value.filename == str(state / "study.journal"), full.value
